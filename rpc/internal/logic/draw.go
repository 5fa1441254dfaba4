package logic

import (
	"context"

	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"
)

// drawOf is the admin view of activity a's draw (nil: it has none), read without warming Redis.
func drawOf(ctx context.Context, svcCtx *svc.ServiceContext, a *model.Activity) (*inventory.Draw, error) {
	if a.DrawSeconds == 0 {
		return nil, nil
	}
	aid := int64(a.Id)
	n, err := svcCtx.Store.EntryCount(ctx, aid)
	if err != nil {
		return nil, err
	}
	p, err := svcCtx.Store.Draw(ctx, aid)
	if err != nil {
		return nil, err
	}
	return &inventory.Draw{Seconds: int64(a.DrawSeconds), Entries: n, Status: drawStatus(a, p),
		Winners: p.Winners}, nil
}

// drawStatus is the state of activity a's draw: done once MySQL or Redis says so.
func drawStatus(a *model.Activity, p stock.DrawProgress) string {
	switch {
	case a.DrawDoneAt > 0 || p.Status == stock.DrawDone:
		return stock.DrawDone
	case p.Status == stock.DrawDrawing:
		return stock.DrawDrawing
	}
	return stock.DrawPending
}
