package kafkax_test

import (
	"context"
	"errors"
	"slices"
	"strings"
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
