package merchant

import (
	"context"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/middleware"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/api/internal/validate"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

type CreateActivityLogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// create a flash-sale activity for one SKU
func NewCreateActivityLogic(ctx context.Context, svcCtx *svc.ServiceContext) *CreateActivityLogic {
	return &CreateActivityLogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

// CreateActivity asks the inventory service to write the activity and its inventory row
// (available = stock) in one MySQL transaction, owned by the token's merchant. Redis is
// untouched; warm-up (explicit or scheduled) or the first read loads it.
func (l *CreateActivityLogic) CreateActivity(req *types.CreateActivityReq) (*types.ActivityResp, error) {
	mid, err := auth.MID(l.ctx)
	if err != nil {
		return nil, err
	}
	if err := validate.CreateActivity(req); err != nil {
		return nil, err
	}
	idem := middleware.IdempotencyOf(l.ctx)
	res, err := l.svcCtx.Inventory.CreateActivity(l.ctx, &inventoryclient.CreateActivityReq{
		MerchantId:        mid,
		IdempotencyKey:    idem.Key,
		IdempotencyFp:     idem.FP,
		SkuId:             req.SkuId,
		Name:              req.Name,
		Total:             req.Stock,
		StartTime:         req.StartTime,
		EndTime:           req.EndTime,
		PerUserLimit:      req.PerUserLimit,
		PayTimeoutSeconds: req.PayTimeoutSeconds,
		DrawSeconds:       req.DrawSeconds,
		Price:             req.Price,
	})
	if err != nil {
		return nil, err
	}
	a := res.GetActivity()
	l.Infof("merchant %d created activity %d (sku %d, stock %d)", mid, a.GetActivityId(), req.SkuId, req.Stock)
	resp := activityResp(a)
	return &resp, nil
}
