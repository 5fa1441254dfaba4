package merchant

import (
	"context"
	"github.com/seckill/seckill/api/internal/drawview"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/api/internal/validate"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// merchantFor returns the calling merchant (the mid claim of the token, never the body)
// once activity id is valid. Every merchant RPC carries it: the inventory service answers
// ACTIVITY_NOT_FOUND for another merchant's activity, like a missing one, so that
// merchants cannot probe or change each other's sales.
func merchantFor(ctx context.Context, id int64) (int64, error) {
	mid, err := auth.MID(ctx)
	if err != nil {
		return 0, err
	}
	return mid, validate.ActivityID(id)
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
		DrawSeconds:       a.GetDrawSeconds(),
		Price:             a.GetPrice(),
		Draw:              drawview.Public(a),
	}
}
