package logic

import (
	"context"
	"errors"

	"github.com/seckill/seckill/internal/stock"

	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type AdjustLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewAdjustLogic(ctx context.Context, svcCtx *svc.ServiceContext) *AdjustLogic {
	return &AdjustLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

func (l *AdjustLogic) Adjust(in *inventory.AdjustReq) (*inventory.AdjustResp, error) {
	if err := actFor(l.ctx, l.svcCtx, in.ActivityId, in.MerchantId); err != nil {
		return nil, err
	}
	c, err := l.svcCtx.Book.Adjust(l.ctx, in.ActivityId, in.Delta, in.IdempotencyKey, in.IdempotencyFp)
	if errors.Is(err, stock.ErrNotWarm) {
		// Adjusting a cold activity warms it first: every change goes through Redis,
		// so that it reaches MySQL as an event like any other.
		if _, _, err = l.svcCtx.Loader.Warmup(l.ctx, in.ActivityId); err == nil {
			c, err = l.svcCtx.Book.Adjust(l.ctx, in.ActivityId, in.Delta, in.IdempotencyKey, in.IdempotencyFp)
		}
	}
	if err != nil {
		return nil, err
	}
	return &inventory.AdjustResp{Stock: &inventory.Stock{ActivityId: in.ActivityId, Total: c.Total,
		Remaining: c.Remaining, Locked: c.Locked, Sold: c.Sold}}, nil
}
