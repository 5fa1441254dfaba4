package merchant

import (
	"context"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/internal/middleware"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/api/internal/validate"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

type UpdateActivityLogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// edit the activity before its start: replace what create set
func NewUpdateActivityLogic(ctx context.Context, svcCtx *svc.ServiceContext) *UpdateActivityLogic {
	return &UpdateActivityLogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

// UpdateActivity asks the inventory service to replace what create set of the merchant's
// activity, before its start only (STARTED after): MySQL and the warmed Redis copy change as
// one step, and every gateway drops the window it cached (the edit's message on the
// stock-back channel).
func (l *UpdateActivityLogic) UpdateActivity(req *types.UpdateActivityReq) (*types.ActivityResp, error) {
	mid, err := merchantFor(l.ctx, req.Id)
	if err != nil {
		return nil, err
	}
	if err := validate.UpdateActivity(req); err != nil {
		return nil, err
	}
	idem := middleware.IdempotencyOf(l.ctx)
	in := &inventoryclient.UpdateActivityReq{
		ActivityId:        req.Id,
		MerchantId:        mid,
		SkuId:             req.SkuId,
		Name:              req.Name,
		StartTime:         req.StartTime,
		EndTime:           req.EndTime,
		PerUserLimit:      req.PerUserLimit,
		PayTimeoutSeconds: req.PayTimeoutSeconds,
		DrawSeconds:       req.DrawSeconds,
		Price:             req.Price,
		IdempotencyKey:    idem.Key,
		IdempotencyFp:     idem.FP,
	}
	if req.Stock != nil {
		in.HasTotal, in.Total = true, *req.Stock
	}
	res, err := l.svcCtx.Inventory.UpdateActivity(l.ctx, in)
	if err != nil {
		return nil, err
	}
	out := activityResp(res.GetActivity())
	return &out, nil
}
