package logic

import (
	"context"
	"fmt"
	"time"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/activity"
	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type EndActivityLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewEndActivityLogic(ctx context.Context, svcCtx *svc.ServiceContext) *EndActivityLogic {
	return &EndActivityLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

// EndActivity ends the merchant's activity's sale now (docs/API.md, POST .../end): end_time
// becomes now in MySQL first, then in the warmed stock hash (end_sale.lua), whose 'end' every
// reservation checks, so reservations are ENDED from then on through every gateway. Orders
// reserved before keep their expire_at and the keys keep their expiry: they can still be paid
// or cancelled. An ended activity changes nothing, but its Redis copy is still brought to its
// end (a retry of a call that stopped between MySQL and Redis completes it).
func (l *EndActivityLogic) EndActivity(in *inventory.GetActivityReq) (*inventory.ActivityResp, error) {
	if err := domain.CheckActivityID(in.ActivityId); err != nil {
		return nil, err
	}
	a, err := ownedActivity(l.ctx, l.svcCtx, in.ActivityId, in.MerchantId)
	if err != nil {
		return nil, err
	}
	now := time.Now().Unix()
	if now < a.EndTime {
		if err := l.end(a, now); err != nil {
			return nil, err
		}
	}
	if _, err := l.svcCtx.Store.End(l.ctx, in.ActivityId, a.EndTime); err != nil {
		return nil, err
	}
	d, err := drawOf(l.ctx, l.svcCtx, a)
	if err != nil {
		return nil, err
	}
	return &inventory.ActivityResp{Activity: activityOf(a), Draw: d}, nil
}

// end moves a's end_time to now in MySQL (a is updated to what MySQL holds): NOT_STARTED
// before its start, DRAW_PENDING while its opening draw is not done.
func (l *EndActivityLogic) end(a *model.Activity, now int64) error {
	aid := int64(a.Id)
	if now < a.StartTime {
		return xerr.ErrNotStarted
	}
	if a.DrawSeconds > 0 {
		p, err := l.svcCtx.Store.Draw(l.ctx, aid)
		if err != nil {
			return err
		}
		if drawStatus(a, p) != domain.DrawDone {
			return xerr.ErrDrawPending
		}
	}
	if _, err := l.svcCtx.Activities.EndAt(l.ctx, aid, now); err != nil {
		return activity.DBError(fmt.Errorf("end activity %d: %w", aid, err))
	}
	// Re-read: another end may have won the race (its end_time stands, and is the answer).
	b, err := l.svcCtx.Activities.FindOne(l.ctx, a.Id)
	if err != nil {
		return activity.DBError(fmt.Errorf("read activity %d: %w", aid, err))
	}
	*a = *b
	return nil
}
