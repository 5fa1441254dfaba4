package logic

import (
	"context"
	"errors"

	"github.com/seckill/seckill/internal/stock"

	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type ReserveLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewReserveLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ReserveLogic {
	return &ReserveLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

func (l *ReserveLogic) Reserve(in *inventory.ReserveReq) (*inventory.ReserveResp, error) {
	res, err := l.svcCtx.Store.Reserve(l.ctx, in.ActivityId, in.Uid, in.Quantity, in.RequestId)
	if errors.Is(err, stock.ErrNotWarm) {
		// Not in Redis: backfill from MySQL (one caller per activity), then try once more.
		if _, err = l.svcCtx.Loader.Stock(l.ctx, in.ActivityId); err == nil {
			res, err = l.svcCtx.Store.Reserve(l.ctx, in.ActivityId, in.Uid, in.Quantity, in.RequestId)
		}
	}
	if err != nil {
		return nil, err
	}
	return &inventory.ReserveResp{OrderNo: res.OrderNo, Quantity: res.Quantity,
		ExpireAt: res.ExpireAt / 1000, Remaining: res.Remaining, Replay: res.Replay, Status: res.State}, nil
}
