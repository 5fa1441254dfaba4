package ops

import (
	"context"
	"time"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// pingTimeout bounds the health probe, well under the route timeout.
const pingTimeout = time.Second

type HealthzLogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// 200 when the inventory service is reachable
func NewHealthzLogic(ctx context.Context, svcCtx *svc.ServiceContext) *HealthzLogic {
	return &HealthzLogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

// Healthz pings the inventory service; a failure is BUSY (503) via the error mapping.
func (l *HealthzLogic) Healthz() (*types.HealthResp, error) {
	ctx, cancel := context.WithTimeout(l.ctx, pingTimeout)
	defer cancel()
	if _, err := l.svcCtx.Inventory.Ping(ctx, &inventoryclient.PingReq{}); err != nil {
		return nil, err
	}
	return &types.HealthResp{Status: "ok"}, nil
}
