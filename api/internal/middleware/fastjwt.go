package middleware

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v4"
)

// hs256Header is the header segment golang-jwt writes for an HS256 token (internal/authtoken
// mints them so): the base64url of {"alg":"HS256","typ":"JWT"}.
const hs256Header = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"

// Bounds of the tokens fastHS256 reads.
const (
	fastSigLen       = 43  // base64url (no padding) of an HMAC-SHA256
	fastMaxClaimsSeg = 344 // claims segment; 258 bytes decoded
	fastMaxDigits    = 15  // integers below 1e15: exact as the float64 jwt compares
)

// fastHS256 verifies, without reflection or allocation, the tokens of one plain shape: the
// header segment hs256Header, a claims segment that decodes to a JSON object whose
// members are all unquoted integers (0 or 1..15 digits without a leading zero; keys of
// [A-Za-z0-9_]; no whitespace, no repeated exp, iat, nbf or id claim), and a signature
// segment that is the canonical base64url of HMAC-SHA256(secret, header.claims). ok
// means go-zero's token parser (rest/token: golang-jwt's parser with JSON numbers and
// the same secret) accepts raw at now with the same claims, MapClaims.Valid holds at now,
// and the id claim is a positive integer, so TokenAuth answers it as before: such a
// token decodes to MapClaims of json.Number values (exact: below 2^53), HS256 verifies
// the signature whose canonical encoding was compared, and Valid compares now (unix s)
// against exp, iat and nbf as the integers tokenBounds does. !ok says nothing: the caller
// asks go-zero's parser, which answers everything else as it always did
// (TestFastHS256AgreesWithParser, FuzzFastHS256).
type fastHS256 struct {
	claim string
	pool  sync.Pool // *macState
}

type macState struct {
	mac    hash.Hash
	buf    []byte // header.claims, then the signature segment
	sum    [sha256.Size]byte
	enc    [fastSigLen]byte
	claims [fastMaxClaimsSeg * 3 / 4]byte
}

func newFastHS256(secret, claim string) *fastHS256 {
	key := []byte(secret)
	f := &fastHS256{claim: claim}
	f.pool.New = func() any {
		return &macState{mac: hmac.New(sha256.New, key), buf: make([]byte, 0, 512)}
	}
	return f
}

// tokenBounds are the time claims of a token fastHS256 reads, in unix seconds.
type tokenBounds struct {
	exp, iat, nbf  int64
	hasIat, hasNbf bool
}

// valid is MapClaims.Valid of such a token at now (unix s): now < exp, now >= iat and
// now >= nbf when present.
func (b *tokenBounds) valid(now int64) bool {
	return now < b.exp && (!b.hasIat || now >= b.iat) && (!b.hasNbf || now >= b.nbf)
}

// jwtNow is the clock golang-jwt's claims validation reads.
func jwtNow() int64 { return jwt.TimeFunc().Unix() }

// verify returns raw's id claim when raw is a token of the shape above, signed with the
// secret and valid at now (unix s).
func (f *fastHS256) verify(raw string, now int64) (id int64, ok bool) {
	// Decoding options that change what DecodeSegment accepts, and a time precision
	// coarser than the second: the parser decides.
	if jwt.DecodePaddingAllowed || jwt.DecodeStrict || jwt.TimePrecision != time.Second {
		return 0, false
	}
	head, rest, ok := strings.Cut(raw, ".")
	if !ok || head != hs256Header {
		return 0, false
	}
	seg, sig, ok := strings.Cut(rest, ".")
	if !ok || len(sig) != fastSigLen || len(seg) == 0 || len(seg) > fastMaxClaimsSeg {
		return 0, false
	}
	st := f.pool.Get().(*macState)
	defer f.pool.Put(st)
	signed := len(head) + 1 + len(seg)
	st.buf = append(st.buf[:0], raw[:signed]...)
	st.buf = append(st.buf, sig...)
	st.mac.Reset()
	st.mac.Write(st.buf[:signed])
	base64.RawURLEncoding.Encode(st.enc[:], st.mac.Sum(st.sum[:0]))
	if !hmac.Equal(st.enc[:], st.buf[signed:]) {
		return 0, false
	}
	n, err := base64.RawURLEncoding.Decode(st.claims[:], st.buf[len(head)+1:signed])
	if err != nil {
		return 0, false
	}
	id, b, ok := intClaims(st.claims[:n], f.claim)
	if !ok || !b.valid(now) {
		return 0, false
	}
	return id, true
}

// intClaims reads a JSON object of integer members (the shape fastHS256 takes); ok needs
// exp and a positive claim.
func intClaims(p []byte, claim string) (id int64, b tokenBounds, ok bool) {
	if len(p) < 2 || p[0] != '{' {
		return 0, b, false
	}
	var hasExp, hasID bool
	i := 1
	for {
		// "key":
		if i >= len(p) || p[i] != '"' {
			return 0, b, false
		}
		i++
		start := i
		for i < len(p) && (p[i] >= 'a' && p[i] <= 'z' || p[i] >= 'A' && p[i] <= 'Z' || p[i] >= '0' && p[i] <= '9' ||
			p[i] == '_') {
			i++
		}
		key := p[start:i]
		if len(key) == 0 || i+1 >= len(p) || p[i] != '"' || p[i+1] != ':' {
			return 0, b, false
		}
		i += 2
		// integer
		start = i
		var v int64
		for i < len(p) && p[i] >= '0' && p[i] <= '9' {
			v = v*10 + int64(p[i]-'0')
			i++
		}
		digits := i - start
		if digits == 0 || digits > fastMaxDigits || (digits > 1 && p[start] == '0') || i >= len(p) {
			return 0, b, false
		}
		switch string(key) {
		case "exp":
			if hasExp {
				return 0, b, false
			}
			hasExp, b.exp = true, v
		case "iat":
			if b.hasIat {
				return 0, b, false
			}
			b.hasIat, b.iat = true, v
		case "nbf":
			if b.hasNbf {
				return 0, b, false
			}
			b.hasNbf, b.nbf = true, v
		}
		if string(key) == claim {
			if hasID {
				return 0, b, false
			}
			hasID, id = true, v
		}
		switch p[i] {
		case ',':
			i++
		case '}':
			return id, b, hasExp && hasID && id > 0 && i+1 == len(p)
		default:
			return 0, b, false
		}
	}
}
