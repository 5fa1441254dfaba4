package kafkax_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/kafkax"
)

func TestSignerVerify(t *testing.T) {
	s := kafkax.NewSigner(testenv.RandomSecret())
	orig := kafkax.Message{Key: []byte("3-1"), Value: []byte(`{"delta":1}`),
		Headers: []kafkax.HeaderKV{{Key: "traceparent", Value: []byte("00-x")}}}
	signed := s.Sign(orig)
	if len(orig.Headers) != 1 {
		t.Fatalf("Sign changed its argument's headers: %v", orig.Headers)
	}
	if err := s.Verify(signed); err != nil {
		t.Fatalf("a signed message: %v", err)
	}
	if err := s.Verify(s.Sign(signed)); err != nil {
		t.Fatalf("a message signed twice: %v", err)
	}
	mac := signed.Headers[len(signed.Headers)-1]
	twice := append(slices.Clip(signed.Headers), mac)
	forged := map[string]kafkax.Message{
		"unsigned":      orig,
		"other key":     kafkax.NewSigner(testenv.RandomSecret()).Sign(orig),
		"value":         {Key: signed.Key, Value: []byte(`{"delta":1000}`), Headers: signed.Headers},
		"key":           {Key: []byte("3-2"), Value: signed.Value, Headers: signed.Headers},
		"key/value cut": {Key: []byte("3-1{"), Value: []byte(`"delta":1}`), Headers: signed.Headers},
		"two macs":      {Key: signed.Key, Value: signed.Value, Headers: twice},
		"empty mac":     {Key: signed.Key, Value: signed.Value, Headers: []kafkax.HeaderKV{{Key: kafkax.HeaderMAC}}},
	}
	for name, m := range forged {
		t.Run(name, func(t *testing.T) {
			if err := s.Verify(m); !errors.Is(err, kafkax.ErrForged) {
				t.Fatalf("Verify = %v, want ErrForged", err)
			}
		})
	}
}

// recorder is a Sender that keeps what it was given.
type recorder struct{ got []kafkax.Message }

func (r *recorder) Send(_ context.Context, msgs ...kafkax.Message) error {
	r.got = append(r.got, msgs...)
	return nil
}

func TestSignedSender(t *testing.T) {
	s := kafkax.NewSigner(testenv.RandomSecret())
	rec := &recorder{}
	if err := kafkax.Signed(rec, s).Send(context.Background(), kafkax.Message{Key: []byte("k"), Value: []byte("v")},
		kafkax.Message{Key: []byte("k2"), Value: []byte("v2")}); err != nil {
		t.Fatal(err)
	}
	for _, m := range rec.got {
		if err := s.Verify(m); err != nil {
			t.Fatalf("%s: %v", m.Key, err)
		}
	}
	if len(rec.got) != 2 {
		t.Fatalf("%d messages sent, want 2", len(rec.got))
	}
	if kafkax.NewSigner("") != nil || kafkax.Signed(rec, nil) != kafkax.Sender(rec) {
		t.Fatal("an empty key should sign nothing")
	}
}

func TestCheckEventKey(t *testing.T) {
	if err := kafkax.CheckEventKey("", false); err != nil {
		t.Fatalf("no key outside pro mode: %v", err)
	}
	for _, bad := range []string{"", "short", strings.Repeat("a", 64)} {
		if err := kafkax.CheckEventKey(bad, true); err == nil || !strings.Contains(err.Error(), kafkax.EnvEventKey) {
			t.Fatalf("key %q accepted in pro mode (%v)", bad, err)
		}
	}
	if err := kafkax.CheckEventKey(strings.Repeat("ab", 32), false); err == nil {
		t.Fatal("a weak key accepted when set")
	}
	if err := kafkax.CheckEventKey(testenv.RandomSecret(), true); err != nil {
		t.Fatal(err)
	}
}

func TestAuthRefusesBadSettings(t *testing.T) {
	for name, a := range map[string]kafkax.Auth{
		"mechanism":   {Mechanism: "PLAIN", User: "u", Pass: "p"},
		"no password": {Mechanism: "SCRAM-SHA-256", User: "u"},
		"CA file":     {TLS: true, CAFile: "/nonexistent/ca.pem"},
	} {
		if _, err := a.Dialer(); err == nil {
			t.Errorf("%s: Dialer accepted %+v", name, a)
		}
		if _, err := a.Transport(); err == nil {
			t.Errorf("%s: Transport accepted %+v", name, a)
		}
	}
	if tr, err := (kafkax.Auth{}).Transport(); tr != nil || err != nil {
		t.Fatalf("no auth: transport %v, %v; want kafka-go's default", tr, err)
	}
	if d, err := (kafkax.Auth{}).Dialer(); d != nil || err != nil {
		t.Fatalf("no auth: dialer %v, %v; want kafka-go's default", d, err)
	}
}

// The Signer's reused HMAC states leak nothing from one message into another: messages
// signed concurrently carry the MAC of a fresh hmac.New over the same bytes.
func TestSignerConcurrentMACsAreFresh(t *testing.T) {
	secret := testenv.RandomSecret()
	s := kafkax.NewSigner(secret)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				m := kafkax.Message{Key: []byte(fmt.Sprintf("%d-%d", g, i)), Value: []byte(strings.Repeat("v", i%97))}
				got := s.Sign(m).Headers[0].Value
				if want := freshMAC(secret, m); !hmac.Equal(got, want) {
					errs <- fmt.Errorf("goroutine %d message %d: MAC %x, a fresh hmac gives %x", g, i, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// freshMAC is Signer's MAC computed from scratch: the key's length, the key, the value.
func freshMAC(secret string, m kafkax.Message) []byte {
	h := hmac.New(sha256.New, []byte(secret))
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(m.Key)))
	h.Write(n[:])
	h.Write(m.Key)
	h.Write(m.Value)
	return h.Sum(nil)
}

// Signing a reserved event's message, beside a fresh hmac.New per message
// (go test -bench Sign ./internal/kafkax).
func BenchmarkSign(b *testing.B) {
	s := kafkax.NewSigner(testenv.RandomSecret())
	m := kafkax.Message{Key: []byte("12-17000000001238c0ffee0123456789abcdef"), Value: make([]byte, 300)}
	for b.Loop() {
		s.Sign(m)
	}
}

func BenchmarkSignFreshHMAC(b *testing.B) {
	secret := testenv.RandomSecret()
	m := kafkax.Message{Key: []byte("12-17000000001238c0ffee0123456789abcdef"), Value: make([]byte, 300)}
	for b.Loop() {
		freshMAC(secret, m)
	}
}
