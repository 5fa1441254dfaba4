package auth

import (
	"encoding/json"
	"net/http"

	"github.com/golang-jwt/jwt/v4"
	"github.com/golang-jwt/jwt/v4/request"

	"github.com/seckill/seckill/internal/xerr"
)

var errNoExpiry = xerr.New(xerr.Unauthorized, "token has no exp claim: tokens must expire")

// RequireExpiry refuses a token without a numeric `exp` claim. go-zero's JWT middleware,
// which runs before and has verified the signature, checks `exp` only when present (a
// token without one would never expire) and does not pass it on in the context, so the
// claim middlewares read it again from the same header, with the same extractor.
func RequireExpiry(r *http.Request) error {
	raw, err := request.AuthorizationHeaderExtractor.ExtractToken(r)
	if err != nil {
		return errNoExpiry
	}
	claims := jwt.MapClaims{}
	p := jwt.NewParser(jwt.WithJSONNumber())
	if _, _, err := p.ParseUnverified(raw, claims); err != nil {
		return errNoExpiry
	}
	return Expiry(claims)
}

// Expiry refuses verified claims without a numeric `exp` claim (RequireExpiry's check,
// for a caller that holds the claims go-zero's token parser returned).
func Expiry(claims jwt.MapClaims) error {
	switch v := claims["exp"].(type) {
	case json.Number:
		if _, err := v.Float64(); err == nil {
			return nil
		}
	case float64:
		return nil
	}
	return errNoExpiry
}
