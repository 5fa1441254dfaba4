// Code scaffolded by goctl. Safe to edit.
// goctl 1.10.2

package merchant

import (
	"net/http"

	"github.com/seckill/seckill/api/internal/logic/merchant"
	"github.com/seckill/seckill/api/internal/reply"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/zeromicro/go-zero/rest/httpx"
)

// the activity's orders in row id order; with Accept: text/csv every matching order as CSV
func ListOrdersHandler(svcCtx *svc.ServiceContext) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req types.OrderListReq
		if err := httpx.Parse(r, &req); err != nil {
			httpx.ErrorCtx(r.Context(), w, err)
			return
		}

		l := merchant.NewListOrdersLogic(r.Context(), svcCtx)
		if reply.WantsCSV(r) {
			l.ExportCSV(&req, w) // streamed: it writes its own answer
			return
		}
		resp, err := l.ListOrders(&req)
		if err != nil {
			httpx.ErrorCtx(r.Context(), w, err)
		} else {
			httpx.OkJsonCtx(r.Context(), w, resp)
		}
	}
}
