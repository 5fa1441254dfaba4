package logic

import (
	"context"

	"github.com/seckill/seckill/internal/xerr"

	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type PingLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewPingLogic(ctx context.Context, svcCtx *svc.ServiceContext) *PingLogic {
	return &PingLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

func (l *PingLogic) Ping(in *inventory.PingReq) (*inventory.PingResp, error) {
	up := l.svcCtx.Redis.PingCtx(l.ctx)
	if !up && !l.svcCtx.Degrade.On {
		return nil, xerr.New(xerr.Busy, "redis unreachable")
	}
	// Degrade mode: the service still sells (from MySQL); it says which activities.
	return &inventory.PingResp{Degraded: l.svcCtx.Degrade.Degraded(), RedisDown: !up}, nil
}
