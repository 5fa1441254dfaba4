// Code scaffolded by goctl. Safe to edit.
// goctl 1.10.2

package payment

import (
	"net/http"

	"github.com/seckill/seckill/api/internal/logic/payment"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/zeromicro/go-zero/rest/httpx"
)

// the payment provider's notification that an order was paid
func NotifyHandler(svcCtx *svc.ServiceContext) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req types.PaymentNotifyReq
		if err := httpx.Parse(r, &req); err != nil {
			httpx.ErrorCtx(r.Context(), w, err)
			return
		}

		l := payment.NewNotifyLogic(r.Context(), svcCtx)
		resp, err := l.Notify(&req)
		if err != nil {
			httpx.ErrorCtx(r.Context(), w, err)
		} else {
			httpx.OkJsonCtx(r.Context(), w, resp)
		}
	}
}
