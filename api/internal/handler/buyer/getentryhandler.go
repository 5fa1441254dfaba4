// Code scaffolded by goctl. Safe to edit.
// goctl 1.10.2

package buyer

import (
	"net/http"

	"github.com/seckill/seckill/api/internal/logic/buyer"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/zeromicro/go-zero/rest/httpx"
)

// the caller's entry in the activity's opening draw
func GetEntryHandler(svcCtx *svc.ServiceContext) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req types.EntryPathReq
		if err := httpx.Parse(r, &req); err != nil {
			httpx.ErrorCtx(r.Context(), w, err)
			return
		}

		l := buyer.NewGetEntryLogic(r.Context(), svcCtx)
		resp, err := l.GetEntry(&req)
		if err != nil {
			httpx.ErrorCtx(r.Context(), w, err)
		} else {
			httpx.OkJsonCtx(r.Context(), w, resp)
		}
	}
}
