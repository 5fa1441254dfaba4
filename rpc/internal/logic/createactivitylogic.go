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
	id, err := l.svcCtx.Activities.InsertWithInventory(l.ctx, a)
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
