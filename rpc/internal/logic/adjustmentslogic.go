package logic

import (
	"context"
	"fmt"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/rpc/internal/activity"
	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type AdjustmentsLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewAdjustmentsLogic(ctx context.Context, svcCtx *svc.ServiceContext) *AdjustmentsLogic {
	return &AdjustmentsLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

// Adjustments is the merchant's activity's stock history from MySQL (stock_adjustment, as the
// writer applied the Adjust events), newest first, each with the total after it. Another
// merchant's activity is ACTIVITY_NOT_FOUND, like a missing one.
func (l *AdjustmentsLogic) Adjustments(in *inventory.GetActivityReq) (*inventory.AdjustmentsResp, error) {
	if err := domain.CheckActivityID(in.ActivityId); err != nil {
		return nil, err
	}
	if _, err := ownedActivity(l.ctx, l.svcCtx, in.ActivityId, in.MerchantId); err != nil {
		return nil, err
	}
	rows, err := l.svcCtx.Adjustments.FindHistory(l.ctx, in.ActivityId)
	if err != nil {
		return nil, activity.DBError(fmt.Errorf("adjustments of activity %d: %w", in.ActivityId, err))
	}
	out := &inventory.AdjustmentsResp{Adjustments: make([]*inventory.Adjustment, len(rows))}
	for i, r := range rows {
		out.Adjustments[i] = &inventory.Adjustment{Delta: r.Delta, Total: r.Total, CreatedAt: r.CreatedAt}
	}
	return out, nil
}
