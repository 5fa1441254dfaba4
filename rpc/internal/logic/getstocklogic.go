package logic

import (
	"context"
	"time"

	"github.com/seckill/seckill/rpc/internal/activity"
	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type GetStockLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewGetStockLogic(ctx context.Context, svcCtx *svc.ServiceContext) *GetStockLogic {
	return &GetStockLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

func (l *GetStockLogic) GetStock(in *inventory.GetStockReq) (*inventory.GetStockResp, error) {
	snap, err := l.svcCtx.Loader.Stock(l.ctx, in.ActivityId)
	if err != nil {
		return nil, err
	}
	a := toActivity(snap)
	if snap.DrawAt > 0 { // the buyer's view of the draw: its commitment, the seed once done
		seed, err := l.svcCtx.Seeds.Seed(l.ctx, snap.ActivityID)
		if err != nil {
			return nil, err
		}
		a.DrawSeconds, a.DrawAt = snap.DrawAt/1000-snap.Start, snap.DrawAt/1000
		a.DrawCommitment, a.DrawSeed = activity.PublicDraw(seed, snap.Drawn)
	}
	return &inventory.GetStockResp{Activity: a, Stock: toStock(snap), Warm: true,
		Status: Status(snap, time.Now().Unix())}, nil
}
