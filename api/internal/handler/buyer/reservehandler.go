// Code scaffolded by goctl. Safe to edit.
// goctl 1.10.2

package buyer

import (
	"net/http"
	"strconv"
	"time"

	"github.com/seckill/seckill/api/internal/logic/buyer"
	"github.com/seckill/seckill/api/internal/reserve"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/internal/domain"
	"github.com/zeromicro/go-zero/rest/httpx"
)

// reserve stock
func ReserveHandler(svcCtx *svc.ServiceContext) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// The Reserve middleware (the reservation pipeline) decoded and checked the body.
		req, ok := reserve.Request(r.Context())
		if !ok {
			httpx.ErrorCtx(r.Context(), w, reserve.ErrNoReservation)
			return
		}

		l := buyer.NewReserveLogic(r.Context(), svcCtx)
		resp, err := l.Reserve(req)
		switch {
		case err != nil:
			httpx.ErrorCtx(r.Context(), w, err)
		case resp.Status == domain.StateQueued: // an entry of the opening draw: ask again at draw_at
			w.Header().Set("Retry-After", strconv.FormatInt(max(resp.DrawAt-time.Now().Unix(), 1), 10))
			httpx.WriteJsonCtx(r.Context(), w, http.StatusAccepted, types.EntryResp{ActivityId: resp.ActivityId,
				RequestId: resp.RequestId, Quantity: resp.Quantity, Status: resp.Status, DrawAt: resp.DrawAt})
		default:
			httpx.OkJsonCtx(r.Context(), w, resp)
		}
	}
}
