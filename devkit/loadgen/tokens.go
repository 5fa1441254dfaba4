package loadgen

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"hash"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seckill/seckill/internal/authtoken"
)

// buyerTokens mints each simulated buyer's token when the buyer is sent (a million are
// never all held): the bytes authtoken.Buyer would sign for that uid at the run's start,
// written without its per-token JSON encoding and reflection (a fraction of its CPU,
// BenchmarkBuyerToken: the clients share the cores with the system they load). The first token is compared
// with authtoken.Buyer's own; should they differ (its claims changed), every token is
// authtoken.Buyer's.
type buyerTokens struct {
	secret   string
	ttl      time.Duration
	header   string // the token's first segment and its dot
	exp, iat int64
	fast     bool
	macs     sync.Pool
}

func newBuyerTokens(secret string, ttl time.Duration, probeUID int64) (*buyerTokens, error) {
	t := &buyerTokens{secret: secret, ttl: ttl}
	t.macs.New = func() any { return hmac.New(sha256.New, []byte(secret)) }
	ref, err := authtoken.Buyer(secret, probeUID, ttl)
	if err != nil {
		return nil, err
	}
	parts := strings.Split(ref, ".")
	if len(parts) != 3 {
		return t, nil
	}
	var claims struct{ Exp, Iat int64 }
	if !decodeSegment(parts[1], &claims) {
		return t, nil // not a JWT this side can read: every token is minted the slow way
	}
	t.header, t.exp, t.iat = parts[0]+".", claims.Exp, claims.Iat
	t.fast = t.mint(probeUID) == ref
	return t, nil
}

// BuyerTokenTTL is how long a simulated buyer's token is valid.
const BuyerTokenTTL = 24 * time.Hour

// BuyerTokens is how the load generator mints buyer uid's token, valid for ttl from now
// (buyerTokens; probeUID's is compared with authtoken.Buyer's): devkit/benchrun's baselines
// mint their buyers' tokens with it, so that a baseline's client does a sale's client work.
func BuyerTokens(secret string, ttl time.Duration, probeUID int64) (func(uid int64) (string, error), error) {
	t, err := newBuyerTokens(secret, ttl, probeUID)
	if err != nil {
		return nil, err
	}
	return t.buyer, nil
}

// buyer is uid's token.
func (t *buyerTokens) buyer(uid int64) (string, error) {
	if !t.fast {
		return authtoken.Buyer(t.secret, uid, t.ttl)
	}
	return t.mint(uid), nil
}

// mint signs the claims {"exp","iat","uid"} (the order encoding/json gives a map) with HS256.
func (t *buyerTokens) mint(uid int64) string {
	payload := make([]byte, 0, 64)
	payload = append(payload, `{"exp":`...)
	payload = strconv.AppendInt(payload, t.exp, 10)
	payload = append(payload, `,"iat":`...)
	payload = strconv.AppendInt(payload, t.iat, 10)
	payload = append(payload, `,"`+authtoken.BuyerClaim+`":`...)
	payload = strconv.AppendInt(payload, uid, 10)
	payload = append(payload, '}')
	enc := base64.RawURLEncoding
	n := len(t.header) + enc.EncodedLen(len(payload))
	buf := make([]byte, n, n+1+enc.EncodedLen(sha256.Size))
	copy(buf, t.header)
	enc.Encode(buf[len(t.header):], payload)
	mac := t.macs.Get().(hash.Hash)
	mac.Reset()
	mac.Write(buf)
	var sum [sha256.Size]byte
	sig := mac.Sum(sum[:0])
	t.macs.Put(mac)
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, sig)
	return string(buf)
}

// decodeSegment reads a JWT's base64url JSON segment into v; false when it is not one.
func decodeSegment(seg string, v any) bool {
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	return err == nil && json.Unmarshal(raw, v) == nil
}
