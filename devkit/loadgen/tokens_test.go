package loadgen

import (
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v4"

	"github.com/seckill/seckill/internal/authtoken"
)

// The minted tokens are authtoken.Buyer's: byte for byte for the probe, and each verifies
// with the secret (only with it) and carries its buyer's uid.
func TestBuyerTokensAreAuthtokens(t *testing.T) {
	toks, err := newBuyerTokens(buyerSecret, 24*time.Hour, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if !toks.fast {
		t.Fatal("the minted probe differs from authtoken.Buyer's token: every token would be authtoken.Buyer's")
	}
	for _, uid := range []int64{1000, 1001, 999_999_999_999} {
		tok, err := toks.buyer(uid)
		if err != nil {
			t.Fatal(err)
		}
		claims := jwt.MapClaims{}
		if _, err := jwt.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) {
			return []byte(buyerSecret),
				nil
		}); err != nil {
			t.Fatalf("uid %d: %v", uid, err)
		}
		if claims[authtoken.BuyerClaim] != float64(uid) || claims["exp"] != float64(toks.exp) ||
			claims["iat"] != float64(toks.iat) {
			t.Fatalf("uid %d: claims %v", uid, claims)
		}
		if _, err := jwt.Parse(tok, func(*jwt.Token) (any, error) { return []byte("other"), nil }); err == nil {
			t.Fatalf("uid %d: verified with another secret", uid)
		}
		// At the same second, authtoken.Buyer signs the same bytes.
		if ref, _ := authtoken.Buyer(buyerSecret, uid, 24*time.Hour); time.Now().Unix() == toks.iat && ref != tok {
			t.Fatalf("uid %d: minted %s, authtoken.Buyer %s", uid, tok, ref)
		}
	}
}

// go test -tags no_k8s -run '^$' -bench BuyerToken ./devkit/loadgen/
func BenchmarkBuyerToken(b *testing.B) {
	toks, err := newBuyerTokens(buyerSecret, 24*time.Hour, 1)
	if err != nil || !toks.fast {
		b.Fatal(err, toks.fast)
	}
	b.Run("minted", func(b *testing.B) {
		for i := range b.N {
			_, _ = toks.buyer(int64(i) + 1_000_000_000)
		}
	})
	b.Run("authtoken.Buyer", func(b *testing.B) {
		for i := range b.N {
			_, _ = authtoken.Buyer(buyerSecret, int64(i)+1_000_000_000, 24*time.Hour)
		}
	})
}
