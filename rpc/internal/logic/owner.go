package logic

import (
	"context"
	"errors"
	"fmt"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/activity"
	"github.com/seckill/seckill/rpc/internal/caller"
	"github.com/seckill/seckill/rpc/internal/svc"
)

// errNoMerchant answers a merchant RPC without a merchant id from a caller acting for merchants.
var errNoMerchant = xerr.New(xerr.InvalidArgument, "merchant_id must be >= 1")

// actFor checks that the caller may act on activity aid for merchant mid: for mid >= 1 the
// activity must be that merchant's (another merchant's is ACTIVITY_NOT_FOUND, like a missing
// one); mid 0 (no merchant) is for an app with AllActivities, or a service without Auth.
func actFor(ctx context.Context, svcCtx *svc.ServiceContext, aid, mid int64) error {
	if err := domain.CheckActivityID(aid); err != nil {
		return err
	}
	if mid == 0 {
		if app, authed := caller.From(ctx); authed && !app.AllActivities {
			return errNoMerchant
		}
		return nil
	}
	_, err := ownedActivity(ctx, svcCtx, aid, mid)
	return err
}

// ownedActivity reads activity aid from MySQL if it belongs to merchant mid (>= 1).
func ownedActivity(ctx context.Context, svcCtx *svc.ServiceContext, aid, mid int64) (*model.Activity, error) {
	if mid < 1 {
		return nil, errNoMerchant
	}
	a, err := svcCtx.Activities.FindOne(ctx, uint64(aid))
	if errors.Is(err, model.ErrNotFound) {
		return nil, xerr.ErrActivityNotFound
	}
	if err != nil {
		return nil, activity.DBError(fmt.Errorf("read activity %d: %w", aid, err))
	}
	if int64(a.MerchantId) != mid {
		return nil, xerr.ErrActivityNotFound
	}
	return a, nil
}
