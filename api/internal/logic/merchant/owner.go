package merchant

import (
	"context"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/api/internal/validate"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// ownActivity returns the activity if it exists and belongs to the calling merchant (the
// mid claim of the token, never the body). The inventory service answers
// ACTIVITY_NOT_FOUND for another merchant's activity, like a missing one, so that
// merchants cannot probe or change each other's sales.
func ownActivity(ctx context.Context, svcCtx *svc.ServiceContext, id int64) (*inventoryclient.Activity, error) {
	mid, err := auth.MID(ctx)
	if err != nil {
		return nil, err
	}
	if err := validate.ActivityID(id); err != nil {
		return nil, err
	}
	res, err := svcCtx.Inventory.GetActivity(ctx, &inventoryclient.GetActivityReq{ActivityId: id, MerchantId: mid})
	if err != nil {
		return nil, err
	}
	return res.GetActivity(), nil
}

// activityResp is an activity as the API shows it (stock is the activity's total).
func activityResp(a *inventoryclient.Activity) types.ActivityResp {
	return types.ActivityResp{
		ActivityId:        a.GetActivityId(),
		SkuId:             a.GetSkuId(),
		Name:              a.GetName(),
		Stock:             a.GetTotal(),
		StartTime:         a.GetStartTime(),
		EndTime:           a.GetEndTime(),
		PerUserLimit:      a.GetPerUserLimit(),
		PayTimeoutSeconds: a.GetPayTimeoutSeconds(),
	}
}
