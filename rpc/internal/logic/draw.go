package logic

import (
	"context"
	"time"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"
)

// drawPending is a view's draw status before the draw begins (the draw hash has none yet;
// its own states are domain.DrawDrawing and domain.DrawDone).
const drawPending = "pending"

// drawOf is the admin view of activity a's draw (nil: it has none), read without warming Redis.
func drawOf(ctx context.Context, svcCtx *svc.ServiceContext, a *model.Activity) (*inventory.Draw, error) {
	if a.DrawSeconds == 0 {
		return nil, nil
	}
	aid := int64(a.Id)
	p, err := svcCtx.Store.Draw(ctx, aid)
	if err != nil {
		return nil, err
	}
	status := drawStatus(a, p)
	// The drawer marks MySQL done just before Redis records the last chunk and its winners (the
	// count this view shows): until Redis says done too, the view says drawing, unless MySQL said
	// done more than two leases ago (Redis lost the draw's record, which a drawer would have
	// written or taken over by then). It said done with 0 winners in that gap before.
	settled := 2 * time.Duration(svcCtx.Config.Draw.LeaseSeconds) * time.Second
	if status == domain.DrawDone && p.Status != domain.DrawDone && time.Since(time.UnixMilli(a.DrawDoneAt)) <= settled {
		status = domain.DrawDrawing
	}
	return &inventory.Draw{Seconds: int64(a.DrawSeconds), Entries: p.Entries, Status: status, Winners: p.Winners}, nil
}

// drawStatus is the state of activity a's draw: done once MySQL or Redis says so (its winners'
// orders are made by then; the seed is public from MySQL's mark on).
func drawStatus(a *model.Activity, p stock.DrawProgress) string {
	switch {
	case a.DrawDoneAt > 0 || p.Status == domain.DrawDone:
		return domain.DrawDone
	case p.Status == domain.DrawDrawing:
		return domain.DrawDrawing
	}
	return drawPending
}
