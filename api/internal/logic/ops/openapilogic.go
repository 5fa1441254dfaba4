// Code scaffolded by goctl. Safe to edit.
// goctl 1.10.2

package ops

import (
	"context"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/internal/apidoc"
	"github.com/seckill/seckill/api/internal/svc"
)

type OpenAPILogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// this API as a Swagger 2.0 document (make gen writes it from this file)
func NewOpenAPILogic(ctx context.Context, svcCtx *svc.ServiceContext) *OpenAPILogic {
	return &OpenAPILogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

// OpenAPI returns the API document, as make gen wrote and the binary embedded it.
func (l *OpenAPILogic) OpenAPI() []byte {
	return apidoc.Document
}
