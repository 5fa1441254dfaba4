package logic

import (
	"context"
	"errors"
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

type CreateActivityLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewCreateActivityLogic(ctx context.Context, svcCtx *svc.ServiceContext) *CreateActivityLogic {
	return &CreateActivityLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

// CreateActivity writes the activity and its inventory row in one MySQL transaction; Redis is
// untouched until a warm-up or the first read loads it.
func (l *CreateActivityLogic) CreateActivity(in *inventory.CreateActivityReq) (*inventory.ActivityResp, error) {
	if err := checkNewActivity(in); err != nil {
		return nil, err
	}
	a := &model.Activity{
		SkuId:             uint64(in.SkuId),
		Name:              in.Name,
		Total:             uint64(in.Total),
		StartTime:         in.StartTime,
		EndTime:           in.EndTime,
		PerUserLimit:      uint64(in.PerUserLimit),
		PayTimeoutSeconds: uint64(in.PayTimeoutSeconds),
		MerchantId:        uint64(in.MerchantId),
		DrawSeconds:       uint64(in.DrawSeconds),
		Price:             uint64(in.Price),
	}
	if in.IdempotencyKey != "" {
		if prior, err := l.created(in); prior != nil || err != nil {
			return prior, err
		}
	}
	var key *model.IdempotencyKey
	if in.IdempotencyKey != "" {
		key = &model.IdempotencyKey{MerchantId: uint64(in.MerchantId), IdemKey: in.IdempotencyKey,
			Fingerprint: in.IdempotencyFp}
	}
	id, err := l.svcCtx.Activities.InsertWithInventoryKeyed(l.ctx, a, key)
	if errors.Is(err, model.ErrKeyTaken) { // a concurrent creation with the key committed first
		if prior, err := l.created(in); prior != nil || err != nil {
			return prior, err
		}
		return nil, xerr.Unavailable(errors.New("create activity: the idempotency key is taken but not found"))
	}
	if err != nil {
		return nil, activity.DBError(fmt.Errorf("create activity: %w", err))
	}
	a.Id = uint64(id)
	// Into the Bloom filter of known ids, or its lookups would never see this activity.
	if err := l.svcCtx.Known.Add(l.ctx, id); err != nil {
		if err = l.svcCtx.Known.Add(l.ctx, id); err != nil {
			l.Errorf(
				"activity %d is not in the Bloom filter (reads answer ACTIVITY_NOT_FOUND until the service restarts and "+
					"reseeds): %v",
				id,
				err,
			)
		}
	}
	l.Infof("merchant %d created activity %d (sku %d, stock %d)", in.MerchantId, id, in.SkuId, in.Total)
	return &inventory.ActivityResp{Activity: activityOf(a)}, nil
}

// created answers a creation whose merchant's Idempotency-Key is recorded: the activity it
// created (the same fingerprint) or IDEMPOTENCY_CONFLICT; nil, nil when the key is not recorded.
func (l *CreateActivityLogic) created(in *inventory.CreateActivityReq) (*inventory.ActivityResp, error) {
	k, err := l.svcCtx.Activities.FindKey(l.ctx, uint64(in.MerchantId), in.IdempotencyKey)
	if errors.Is(err, model.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, activity.DBError(fmt.Errorf("create activity: read the idempotency key: %w", err))
	}
	if k.Fingerprint != in.IdempotencyFp {
		return nil, xerr.ErrIdempotencyConflict
	}
	a, err := l.svcCtx.Activities.FindOne(l.ctx, k.ActivityId)
	if err != nil {
		return nil, activity.DBError(fmt.Errorf("create activity: read activity %d of the idempotency key: %w",
			k.ActivityId, err))
	}
	return &inventory.ActivityResp{Activity: activityOf(a)}, nil
}

// checkNewActivity holds the bounds of docs/API.md for a new activity (domain's, which the
// gateway checks too), and the merchant the gateway names.
func checkNewActivity(in *inventory.CreateActivityReq) error {
	if in.MerchantId < 1 {
		return xerr.New(xerr.InvalidArgument, "merchant_id must be >= 1")
	}
	return domain.CheckNewActivity(domain.NewActivity{SkuID: in.SkuId, Name: in.Name, Stock: in.Total,
		StartTime: in.StartTime, EndTime: in.EndTime, PerUserLimit: in.PerUserLimit,
		PayTimeoutSeconds: in.PayTimeoutSeconds, DrawSeconds: in.DrawSeconds, Price: in.Price}, time.Now())
}
