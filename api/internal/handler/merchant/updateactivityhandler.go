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

// edit the activity before its start: replace what create set
func UpdateActivityHandler(svcCtx *svc.ServiceContext) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req types.UpdateActivityReq
		if err := httpx.Parse(r, &req); err != nil {
			httpx.ErrorCtx(r.Context(), w, err)
			return
		}

		l := merchant.NewUpdateActivityLogic(r.Context(), svcCtx)
		resp, err := l.UpdateActivity(&req)
		if err != nil {
			httpx.ErrorCtx(r.Context(), w, err)
		} else {
			httpx.OkJsonCtx(r.Context(), w, resp)
		}
	}
}
