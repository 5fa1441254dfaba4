package middleware

import (
	"errors"
	"net/http"
	"time"

	"github.com/golang-jwt/jwt/v4"
	"github.com/golang-jwt/jwt/v4/request"
	"github.com/zeromicro/go-zero/rest/httpx"
	"github.com/zeromicro/go-zero/rest/token"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/reply"
)

// Bounds of a TokenAuth's cache of verified tokens.
const (
	TokenCacheLimit = 20_000      // tokens (the least recently used dropped first)
	TokenCacheTTL   = time.Minute // a cached token is verified again after this long
)

// TokenAuth authenticates one JWT audience (one secret, one id claim) as go-zero's jwt
// middleware does, remembering the tokens its parser verified (docs/DESIGN.md "Sold-out at the edge").
type TokenAuth struct {
	secret string
	claim  string
	parser *token.TokenParser
	fast   *fastHS256
	cache  *tokenCache
}

// NewTokenAuth authenticates tokens signed with secret that carry the id claim claim,
// caching at most limit (at least 2) of them; TokenCacheLimit when limit <= 0.
func NewTokenAuth(secret, claim string, limit int) *TokenAuth {
	if limit <= 0 {
		limit = TokenCacheLimit
	}
	limit = max(limit, 2)
	return &TokenAuth{secret: secret, claim: claim, parser: token.NewTokenParser(), fast: newFastHS256(secret, claim),
		cache: newTokenCache(limit, TokenCacheTTL)}
}

type verifiedToken struct {
	claims jwt.MapClaims // read only
	id     int64
}

// Verify is the id of r's token, or the 401 answer: a plain token fastHS256 verifies (again
// at each use, never cached: its check costs less than a cache lookup, and a miss and an
// insert cost more than two checks), else one the parser verified before (cached) whose
// claims are still valid, else go-zero's token parser (rest/token, what rest.WithJwt runs)
// with the numeric exp and the id claim, cached once it passes.
func (a *TokenAuth) Verify(r *http.Request) (int64, error) {
	raw, rawErr := request.AuthorizationHeaderExtractor.ExtractToken(r)
	if rawErr == nil {
		if id, ok := a.fast.verify(raw, jwtNow()); ok {
			return id, nil
		}
		if vt, ok := a.cache.get(raw); ok {
			if vt.claims.Valid() == nil {
				return vt.id, nil
			}
			a.cache.del(raw)
		}
	}
	tok, err := a.parser.ParseToken(r, a.secret, "")
	switch {
	case err != nil:
		return 0, reply.InvalidToken(err)
	case !tok.Valid:
		return 0, reply.InvalidToken(errInvalidToken)
	}
	if err := auth.HS256(tok); err != nil {
		return 0, err
	}
	claims, ok := tok.Claims.(jwt.MapClaims)
	if !ok {
		return 0, reply.InvalidToken(errNoClaims)
	}
	if err := auth.Expiry(claims); err != nil {
		return 0, err
	}
	id, ok := auth.ClaimID(claims[a.claim])
	if !ok {
		return 0, auth.ErrNoClaim
	}
	if rawErr == nil {
		a.cache.set(raw, &verifiedToken{claims: claims, id: id})
	}
	return id, nil
}

// The reasons go-zero's jwt middleware (rest/handler.Authorize) gives.
var (
	errInvalidToken = errors.New("invalid auth token")
	errNoClaims     = errors.New("no auth params")
)

// Refuse writes the 401 answer err of Verify, logged as go-zero's jwt middleware would (redacted).
func Refuse(w http.ResponseWriter, r *http.Request, err error) {
	reply.LogUnauthorized(r, err.Error())
	httpx.ErrorCtx(r.Context(), w, err)
}
