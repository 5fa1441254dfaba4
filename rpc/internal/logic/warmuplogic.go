package logic

import (
	"context"

	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type WarmupLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewWarmupLogic(ctx context.Context, svcCtx *svc.ServiceContext) *WarmupLogic {
	return &WarmupLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

func (l *WarmupLogic) Warmup(in *inventory.WarmupReq) (*inventory.WarmupResp, error) {
	if err := actFor(l.ctx, l.svcCtx, in.ActivityId, in.MerchantId); err != nil {
		return nil, err
	}
	created, snap, err := l.svcCtx.Loader.Warmup(l.ctx, in.ActivityId)
	if err != nil {
		return nil, err
	}
	return &inventory.WarmupResp{Warmed: created, Stock: toStock(snap)}, nil
}
