package middleware

import (
	"net/http"

	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/reply"
)

// BuyerClaimMiddleware runs after the BuyerAuth signature check and requires the `uid`
// claim: a token signed with the right secret but for another audience is still 401.
type BuyerClaimMiddleware struct{}

func NewBuyerClaimMiddleware() *BuyerClaimMiddleware {
	return &BuyerClaimMiddleware{}
}

func (m *BuyerClaimMiddleware) Handle(next http.HandlerFunc) http.HandlerFunc {
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
