// Code scaffolded by goctl. Safe to edit.
// goctl 1.10.2

package ops

import (
	"net/http"

	"github.com/seckill/seckill/api/internal/logic/ops"
	"github.com/seckill/seckill/api/internal/svc"
)

// this API as a Swagger 2.0 document (make gen writes it from this file)
func OpenAPIHandler(svcCtx *svc.ServiceContext) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		doc := ops.NewOpenAPILogic(r.Context(), svcCtx).OpenAPI()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
	}
}
