package logic

import (
	"context"
	"errors"
	"time"

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
	// The fence: which book sells the activity now (degrade mode; Redis when off).
	// On the Redis path the script sells nothing past sellBy (the end of this instance's
	// lease on the mode), however late the call reaches Redis.
	mysql, sellBy, err := l.svcCtx.Degrade.RouteBy(l.ctx, in.ActivityId)
	if err != nil {
		return nil, err
	}
	var res stock.Reservation
	began := time.Now()
	if mysql {
		res, err = l.svcCtx.Degrade.Reserve(l.ctx, in.ActivityId, in.Uid, in.Quantity, in.RequestId)
	} else {
		res, err = l.svcCtx.Store.ReserveBy(l.ctx, in.ActivityId, in.Uid, in.Quantity, in.RequestId, sellBy)
		if errors.Is(err, stock.ErrNotWarm) {
			// Not in Redis: backfill from MySQL (one caller per activity), then try once more.
			if _, err = l.svcCtx.Loader.Stock(l.ctx, in.ActivityId); err == nil {
				res, err = l.svcCtx.Store.ReserveBy(l.ctx, in.ActivityId, in.Uid, in.Quantity, in.RequestId, sellBy)
			}
		}
		if err != nil {
			err = l.svcCtx.Degrade.Failed(l.ctx, in.ActivityId, err) // Redis down: degrade mode
		}
	}
	if err != nil {
		return nil, err
	}
	if hook := l.svcCtx.Degrade.OnReserve; hook != nil && !res.Replay {
		hook(in.ActivityId, mysql, began, time.Now())
	}
	return &inventory.ReserveResp{OrderNo: res.OrderNo, Quantity: res.Quantity,
		ExpireAt: res.ExpireAt / 1000, Remaining: res.Remaining, Replay: res.Replay, Status: res.State}, nil
}
