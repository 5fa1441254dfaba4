package middleware

import (
	"net/http"

	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/reply"
)

// MerchantClaimMiddleware runs after the MerchantAuth signature check and requires the
// `mid` claim.
type MerchantClaimMiddleware struct{}

func NewMerchantClaimMiddleware() *MerchantClaimMiddleware {
	return &MerchantClaimMiddleware{}
}

func (m *MerchantClaimMiddleware) Handle(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := auth.RequireExpiry(r); err != nil {
			reply.LogUnauthorized(r, err.Error())
			httpx.ErrorCtx(r.Context(), w, err)
			return
		}
		ctx, err := auth.WithMerchant(r.Context())
		if err != nil {
			reply.LogUnauthorized(r, err.Error())
			httpx.ErrorCtx(r.Context(), w, err)
			return
		}
		next(w, r.WithContext(ctx))
	}
}
