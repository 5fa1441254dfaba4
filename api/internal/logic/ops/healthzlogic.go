package ops

import (
	"context"
	"time"

	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/zrpc"

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

// Healthz pings the inventory service; a failure is BUSY (503) via the error mapping;
// degrade mode (activities served from MySQL, or Redis down with degrade on) is
// 200 {"status": "degraded", "degraded": [activity ids], "redis_up": bool}.
func (l *HealthzLogic) Healthz() (*types.HealthResp, error) {
	ctx, cancel := context.WithTimeout(l.ctx, pingTimeout)
	defer cancel()
	// Its own bound, not the client's for the sale (Inventory.Timeout, which may be a few
	// ms): a gateway whose inventory service answers a ping in 20 ms is healthy.
	resp, err := l.svcCtx.Inventory.Ping(ctx, &inventoryclient.PingReq{}, zrpc.WithCallTimeout(pingTimeout))
	if err != nil {
		return nil, err
	}
	if len(resp.Degraded) > 0 || resp.RedisDown {
		// Degrade mode: still serving, from MySQL for the activities listed.
		up := !resp.RedisDown
		return &types.HealthResp{Status: "degraded", Degraded: resp.Degraded, RedisUp: &up}, nil
	}
	return &types.HealthResp{Status: "ok"}, nil
}
