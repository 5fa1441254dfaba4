package payment

import (
	"context"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/api/internal/validate"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

type NotifyLogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// the payment provider's notification that an order was paid
func NewNotifyLogic(ctx context.Context, svcCtx *svc.ServiceContext) *NotifyLogic {
	return &NotifyLogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

// Notify confirms the order through the inventory service's Confirm, the buyer's pay route's
// call, with the trade_no and the amount: its script checks the amount (quantity x price) and
// keeps the trade_no with the order. The signature was checked before (PaymentSignature).
func (l *NotifyLogic) Notify(req *types.PaymentNotifyReq) (*types.PaymentResp, error) {
	if err := validate.PaymentNotify(req); err != nil {
		return nil, err
	}
	res, err := l.svcCtx.Inventory.Confirm(l.ctx, &inventoryclient.OrderReq{OrderNo: req.OrderNo,
		TradeNo: req.TradeNo, Amount: req.Amount})
	if err != nil {
		return nil, err
	}
	l.Infof("order %s paid by the provider's trade %s", res.OrderNo, res.TradeNo)
	return &types.PaymentResp{OrderNo: res.OrderNo, Status: res.Status, TradeNo: res.TradeNo}, nil
}
