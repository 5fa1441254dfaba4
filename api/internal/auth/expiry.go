package auth

import (
	"encoding/json"
	"net/http"

	"github.com/golang-jwt/jwt/v4"
	"github.com/golang-jwt/jwt/v4/request"

	"github.com/seckill/seckill/internal/xerr"
)

var errNoExpiry = xerr.New(xerr.Unauthorized, "token has no exp claim: tokens must expire")

// ErrNotHS256 refuses a token signed by another algorithm than HS256.
var ErrNotHS256 = xerr.New(xerr.Unauthorized, "token must be signed with HS256")

// RequireExpiry refuses a token go-zero's JWT middleware verified that is not HS256 or has
// no numeric `exp` claim, reading it again from the same header with the same extractor.
func RequireExpiry(r *http.Request) error {
	raw, err := request.AuthorizationHeaderExtractor.ExtractToken(r)
	if err != nil {
		return errNoExpiry
	}
	claims := jwt.MapClaims{}
	p := jwt.NewParser(jwt.WithJSONNumber())
	tok, _, err := p.ParseUnverified(raw, claims)
	if err != nil {
		return errNoExpiry
	}
	if err := HS256(tok); err != nil {
		return err
	}
	return Expiry(claims)
}

// HS256 refuses tok unless it is signed with HS256 (go-zero's parser takes any HMAC).
func HS256(tok *jwt.Token) error {
	if tok.Method == nil || tok.Method.Alg() != jwt.SigningMethodHS256.Alg() {
		return ErrNotHS256
	}
	return nil
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
