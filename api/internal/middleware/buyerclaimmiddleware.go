package middleware

import (
	"net/http"

	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/reply"
)

// BuyerClaimMiddleware authenticates the buyer routes (TokenAuth with the BuyerAuth
// secret: go-zero's token parser, a cache of verified tokens) and requires the `uid`
// claim: a token signed with the right secret but for another audience is still 401.
type BuyerClaimMiddleware struct {
	auth *TokenAuth
}

func NewBuyerClaimMiddleware(a *TokenAuth) *BuyerClaimMiddleware {
	return &BuyerClaimMiddleware{auth: a}
}

func (m *BuyerClaimMiddleware) Handle(next http.HandlerFunc) http.HandlerFunc {
	return m.auth.Handle(next, auth.WithUID, m.Fallback(next))
}

// Fallback is the claim check behind go-zero's jwt middleware (rest.WithJwt), on the
// claims it put in the context, then next.
func (m *BuyerClaimMiddleware) Fallback(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := auth.RequireExpiry(r); err != nil {
			reply.LogUnauthorized(r, err.Error())
			httpx.ErrorCtx(r.Context(), w, err)
			return
		}
		ctx, err := auth.WithBuyer(r.Context())
		if err != nil {
			reply.LogUnauthorized(r, err.Error())
			httpx.ErrorCtx(r.Context(), w, err)
			return
		}
		next(w, r.WithContext(ctx))
	}
}
