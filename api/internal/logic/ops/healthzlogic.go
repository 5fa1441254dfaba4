package ops

import (
	"context"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/internal/xerr"
)

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

// Healthz answers from the gateway's cached dependency status (svc.Health: at most one
// Ping of the inventory service per second, however many ask): a failure is BUSY (503) via
// the error mapping; degrade mode (activities served from MySQL, or Redis down with degrade
// on) is 200 {"status": "degraded"}. Which activities are degraded is for merchants (the
// admin view) and operators (seckill_inventory_degraded), not this anonymous route.
func (l *HealthzLogic) Healthz() (*types.HealthResp, error) {
	resp, err := l.svcCtx.Health.Status()
	if err != nil {
		return nil, xerr.FromStatus(err)
	}
	if len(resp.Degraded) > 0 || resp.RedisDown {
		return &types.HealthResp{Status: "degraded"}, nil
	}
	return &types.HealthResp{Status: "ok"}, nil
}
