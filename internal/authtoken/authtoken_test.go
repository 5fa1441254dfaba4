package authtoken_test

import (
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v4"

	"github.com/seckill/seckill/internal/authtoken"
)

func parse(t *testing.T, tok, secret string) (jwt.MapClaims, error) {
	t.Helper()
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return []byte(secret), nil })
	return claims, err
}

func TestTokens(t *testing.T) {
	b, err := authtoken.Buyer("buyer-secret", 42, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := parse(t, b, "buyer-secret")
	if err != nil || claims[authtoken.BuyerClaim] != float64(42) || claims[authtoken.MerchantClaim] != nil {
		t.Fatalf("buyer claims %v, %v", claims, err)
	}
	if _, err := parse(t, b, "other-secret"); err == nil {
		t.Fatal("verified with the wrong secret")
	}
	m, err := authtoken.Merchant("merchant-secret", 7, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	claims, err = parse(t, m, "merchant-secret")
	if err != nil || claims[authtoken.MerchantClaim] != float64(7) || claims[authtoken.BuyerClaim] != nil {
		t.Fatalf("merchant claims %v, %v", claims, err)
	}
	expired, err := authtoken.Buyer("buyer-secret", 42, -time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parse(t, expired, "buyer-secret"); err == nil {
		t.Fatal("expired token verified")
	}
	if _, err := authtoken.Buyer("", 1, time.Hour); err == nil {
		t.Fatal("empty secret accepted")
	}
}
