package buyer

import (
	"context"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
)

type GetOrderLogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// one of the caller's orders
func NewGetOrderLogic(ctx context.Context, svcCtx *svc.ServiceContext) *GetOrderLogic {
	return &GetOrderLogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

// GetOrder asks the inventory service, which reads Redis while the activity's keys live
// and MySQL afterwards, and answers ORDER_NOT_FOUND for another user's order.
func (l *GetOrderLogic) GetOrder(req *types.OrderPathReq) (*types.OrderResp, error) {
	in, err := orderReq(l.ctx, req.OrderNo)
	if err != nil {
		return nil, err
	}
	if err := allow(l.ctx, l.svcCtx, l.svcCtx.ReadLimiter, errReadsLimited); err != nil {
		return nil, err
	}
	res, err := l.svcCtx.Inventory.GetOrder(l.ctx, in)
	if err != nil {
		return nil, err
	}
	o := res.GetOrder()
	return &types.OrderResp{
		OrderNo:    o.GetOrderNo(),
		ActivityId: o.GetActivityId(),
		Quantity:   o.GetQuantity(),
		Status:     o.GetStatus(),
		ExpireAt:   o.GetExpireAt(),
		CreatedAt:  o.GetCreatedAt(),
		Amount:     o.GetAmount(),
	}, nil
}
