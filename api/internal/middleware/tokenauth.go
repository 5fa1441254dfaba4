package middleware

import (
	"context"
	"net/http"
	"time"

	"github.com/golang-jwt/jwt/v4"
	"github.com/golang-jwt/jwt/v4/request"
	"github.com/zeromicro/go-zero/rest/handler"
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

// Handle authenticates, stores the id with with and calls next; it answers 401 itself.
// fallback is the route's chain as it ran behind go-zero's jwt middleware (the claim
// checks on go-zero's context values, then next): go-zero's middleware runs it when it
// accepts a token this parse refused a moment before (a token whose nbf was just reached).
func (a *TokenAuth) Handle(next http.HandlerFunc, with func(context.Context, int64) context.Context,
	fallback http.HandlerFunc) http.HandlerFunc {
	goZero := handler.Authorize(a.secret, handler.WithUnauthorizedCallback(reply.Unauthorized))(fallback)
	return func(w http.ResponseWriter, r *http.Request) {
		raw, rawErr := request.AuthorizationHeaderExtractor.ExtractToken(r)
		if rawErr == nil {
			// A plain token is verified again at each use, never cached: its check costs
			// less than a cache lookup (a miss and an insert cost more than two checks).
			if id, ok := a.fast.verify(raw, jwtNow()); ok {
				next(w, r.WithContext(with(r.Context(), id)))
				return
			}
			if vt, ok := a.cache.get(raw); ok {
				if vt.claims.Valid() == nil {
					next(w, r.WithContext(with(r.Context(), vt.id)))
					return
				}
				a.cache.del(raw)
			}
		}
		tok, err := a.parser.ParseToken(r, a.secret, "")
		if err != nil || !tok.Valid {
			goZero.ServeHTTP(w, r)
			return
		}
		if err := auth.HS256(tok); err != nil {
			refuse(w, r, err)
			return
		}
		claims, ok := tok.Claims.(jwt.MapClaims)
		if !ok {
			goZero.ServeHTTP(w, r)
			return
		}
		if err := auth.Expiry(claims); err != nil {
			refuse(w, r, err)
			return
		}
		id, ok := auth.ClaimID(claims[a.claim])
		if !ok {
			refuse(w, r, auth.ErrNoClaim)
			return
		}
		if rawErr == nil {
			a.cache.set(raw, &verifiedToken{claims: claims, id: id})
		}
		next(w, r.WithContext(with(r.Context(), id)))
	}
}

// Verified is the id of r's token when it is one Handle accepts without parsing it: a plain
// token fastHS256 verifies, or one the parser verified before (cached) whose claims are
// still valid. !ok says nothing about the token; it parses and caches nothing.
func (a *TokenAuth) Verified(r *http.Request) (id int64, ok bool) {
	raw, err := request.AuthorizationHeaderExtractor.ExtractToken(r)
	if err != nil {
		return 0, false
	}
	if id, ok := a.fast.verify(raw, jwtNow()); ok {
		return id, true
	}
	if vt, ok := a.cache.get(raw); ok && vt.claims.Valid() == nil {
		return vt.id, true
	}
	return 0, false
}

func refuse(w http.ResponseWriter, r *http.Request, err error) {
	reply.LogUnauthorized(r, err.Error())
	httpx.ErrorCtx(r.Context(), w, err)
}
