// Package authtoken mints the gateway's JWTs (HS256, as go-zero's jwt middleware checks
// them): buyer tokens carry the claim `uid`, merchant tokens the claim `mid`, each signed
// with its own secret. Tests, the load generator and the standalone launcher use it; a
// real deployment has its own login service minting the same shape.
package authtoken

import (
	"errors"
	"time"

	"github.com/golang-jwt/jwt/v4"
)

// Claim names the gateway reads.
const (
	BuyerClaim    = "uid"
	MerchantClaim = "mid"
)

// Buyer returns a token for user uid, valid for ttl.
func Buyer(secret string, uid int64, ttl time.Duration) (string, error) {
	return Sign(secret, jwt.MapClaims{BuyerClaim: uid}, ttl)
}

// Merchant returns a token for merchant mid, valid for ttl.
func Merchant(secret string, mid int64, ttl time.Duration) (string, error) {
	return Sign(secret, jwt.MapClaims{MerchantClaim: mid}, ttl)
}

// Sign signs claims plus iat/exp. A non-positive ttl yields an already expired token
// (what tests of expiry need).
func Sign(secret string, claims jwt.MapClaims, ttl time.Duration) (string, error) {
	if secret == "" {
		return "", errors.New("authtoken: empty secret")
	}
	now := time.Now()
	out := jwt.MapClaims{"iat": now.Unix(), "exp": now.Add(ttl).Unix()}
	if ttl <= 0 {
		out["iat"] = now.Add(ttl).Add(-time.Minute).Unix()
	}
	for k, v := range claims {
		out[k] = v
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, out).SignedString([]byte(secret))
}
