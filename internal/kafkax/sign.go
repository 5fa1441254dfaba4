package kafkax

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"sync"

	"github.com/seckill/seckill/internal/secrets"
)

// EnvEventKey is the environment variable the shipped configs read EventKey from.
const EnvEventKey = "SECKILL_EVENT_KEY"

// HeaderMAC is the Kafka header carrying an event's HMAC-SHA256 over its key and value.
const HeaderMAC = "sk-mac"

// ErrForged is Verify's error for a message without a valid HMAC.
var ErrForged = errors.New("kafkax: missing or wrong " + HeaderMAC)

// CheckEventKey says why key cannot sign events (secrets.Check), when set or required (pro mode).
func CheckEventKey(key string, required bool) error {
	if key == "" && !required {
		return nil
	}
	if err := secrets.Check("EventKey", key); err != nil {
		return fmt.Errorf("%w (%s)", err, EnvEventKey)
	}
	return nil
}

// A Signer signs and verifies messages with a key shared by their producers and consumers.
type Signer struct {
	key []byte
	// macs holds HMAC states keyed with key, reused (Reset): hmac.New hashes the key's
	// pads anew for every message, twice the work of a short message's MAC.
	macs sync.Pool
}

// NewSigner returns a signer with key; nil for an empty key (nothing signed or checked).
func NewSigner(key string) *Signer {
	if key == "" {
		return nil
	}
	s := &Signer{key: []byte(key)}
	s.macs.New = func() any { return hmac.New(sha256.New, s.key) }
	return s
}

// mac is the HMAC-SHA256 of key and value, the key's length first so that the split is unambiguous.
func (s *Signer) mac(key, value []byte) []byte {
	h := s.macs.Get().(hash.Hash)
	defer s.macs.Put(h)
	h.Reset()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(key)))
	h.Write(n[:])
	h.Write(key)
	h.Write(value)
	return h.Sum(nil)
}

// Sign returns m with its HMAC header (a copy of the headers, any earlier HMAC replaced).
func (s *Signer) Sign(m Message) Message {
	hs := make([]HeaderKV, 0, len(m.Headers)+1)
	for _, h := range m.Headers {
		if h.Key != HeaderMAC {
			hs = append(hs, h)
		}
	}
	hs = append(hs, HeaderKV{Key: HeaderMAC, Value: s.mac(m.Key, m.Value)})
	m.Headers = hs
	return m
}

// Verify returns ErrForged unless m carries exactly one HMAC header, and the right one
// (compared in constant time).
func (s *Signer) Verify(m Message) error {
	var got []byte
	n := 0
	for _, h := range m.Headers {
		if h.Key == HeaderMAC {
			got, n = h.Value, n+1
		}
	}
	if n != 1 || !hmac.Equal(got, s.mac(m.Key, m.Value)) {
		return ErrForged
	}
	return nil
}

// Signed returns a Sender that signs every message before sending it through next;
// next itself when s is nil.
func Signed(next Sender, s *Signer) Sender {
	if s == nil {
		return next
	}
	return signed{next: next, s: s}
}

type signed struct {
	next Sender
	s    *Signer
}

func (p signed) Send(ctx context.Context, msgs ...Message) error {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[i] = p.s.Sign(m)
	}
	return p.next.Send(ctx, out...)
}
