package merchant

import (
	"context"
	"errors"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/validate"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
)

// ownActivity returns the activity if it exists and belongs to the calling merchant.
// Another merchant's activity is ACTIVITY_NOT_FOUND, like a missing one, so that
// merchants cannot probe or change each other's sales.
func ownActivity(ctx context.Context, svcCtx *svc.ServiceContext, id int64) (*model.Activity, error) {
	mid, err := auth.MID(ctx)
	if err != nil {
		return nil, err
	}
	if err := validate.ActivityID(id); err != nil {
		return nil, err
	}
	a, err := svcCtx.Activities.FindOne(ctx, uint64(id))
	if errors.Is(err, model.ErrNotFound) {
		return nil, xerr.ErrActivityNotFound
	}
	if err != nil {
		return nil, xerr.Newf(xerr.Internal, "read activity %d: %v", id, err)
	}
	if int64(a.MerchantId) != mid {
		return nil, xerr.ErrActivityNotFound
	}
	return a, nil
}
