package logic

import (
	"context"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/model"

	"github.com/seckill/seckill/rpc/internal/activity"
	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type GetActivityLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewGetActivityLogic(ctx context.Context, svcCtx *svc.ServiceContext) *GetActivityLogic {
	return &GetActivityLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

// GetActivity reads the activity from MySQL if it belongs to the merchant (another merchant's is
// ACTIVITY_NOT_FOUND, like a missing one).
func (l *GetActivityLogic) GetActivity(in *inventory.GetActivityReq) (*inventory.ActivityResp, error) {
	if err := domain.CheckActivityID(in.ActivityId); err != nil {
		return nil, err
	}
	a, err := ownedActivity(l.ctx, l.svcCtx, in.ActivityId, in.MerchantId)
	if err != nil {
		return nil, err
	}
	d, err := drawOf(l.ctx, l.svcCtx, a)
	if err != nil {
		return nil, err
	}
	return &inventory.ActivityResp{Activity: activityOf(a), Draw: d}, nil
}

// activityOf is the activity row as the rpc answers it (total: activity.total as MySQL holds it);
// with a draw, its time, commitment and (once done) seed.
func activityOf(a *model.Activity) *inventory.Activity {
	out := &inventory.Activity{ActivityId: int64(a.Id), SkuId: int64(a.SkuId), Name: a.Name,
		StartTime: a.StartTime, EndTime: a.EndTime, PerUserLimit: int64(a.PerUserLimit),
		PayTimeoutSeconds: int64(a.PayTimeoutSeconds), Total: int64(a.Total), DrawSeconds: int64(a.DrawSeconds),
		Price: int64(a.Price)}
	if a.DrawSeconds > 0 {
		out.DrawAt = activity.DrawAtMs(*a) / 1000
		out.DrawCommitment, out.DrawSeed = activity.PublicDrawOf(a)
	}
	return out
}
