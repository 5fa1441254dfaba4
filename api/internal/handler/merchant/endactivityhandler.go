// Code scaffolded by goctl. Safe to edit.
// goctl 1.10.2

package merchant

import (
	"net/http"

	"github.com/seckill/seckill/api/internal/logic/merchant"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/zeromicro/go-zero/rest/httpx"
)

// end the sale now: end_time becomes now
func EndActivityHandler(svcCtx *svc.ServiceContext) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req types.ActivityPathReq
		if err := httpx.Parse(r, &req); err != nil {
			httpx.ErrorCtx(r.Context(), w, err)
			return
		}

		l := merchant.NewEndActivityLogic(r.Context(), svcCtx)
		resp, err := l.EndActivity(&req)
		if err != nil {
			httpx.ErrorCtx(r.Context(), w, err)
		} else {
			httpx.OkJsonCtx(r.Context(), w, resp)
		}
	}
}
