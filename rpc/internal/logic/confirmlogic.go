package logic

import (
	"context"
	"errors"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"
)

type ConfirmLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

func NewConfirmLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ConfirmLogic {
	return &ConfirmLogic{ctx: ctx, svcCtx: svcCtx}
}

// Confirm pays an order: the buyer's own pay (uid), or with a trade_no the payment provider's
// notification (uid 0), through the same book call and script.
func (l *ConfirmLogic) Confirm(in *inventory.OrderReq) (*inventory.OrderStateResp, error) {
	if in.TradeNo == "" {
		return toOrderState(in.OrderNo, domain.StatePaid, l.svcCtx.Book.Confirm(l.ctx, in.OrderNo, in.Uid))
	}
	if in.Uid != 0 {
		return nil, xerr.New(xerr.InvalidArgument, "a provider's payment (trade_no) names no uid")
	}
	aid, err := l.svcCtx.Store.CheckOrderNo(in.OrderNo)
	if err != nil {
		return nil, err
	}
	price, err := l.svcCtx.Prices.Price(l.ctx, aid)
	if errors.Is(err, xerr.ErrActivityNotFound) {
		return nil, xerr.ErrOrderNotFound // an order of no activity
	}
	if err != nil {
		return nil, err
	}
	p := domain.Payment{TradeNo: in.TradeNo, Amount: in.Amount, Price: price}
	err = l.svcCtx.Book.Pay(l.ctx, in.OrderNo, p)
	if errors.Is(err, xerr.ErrOrderPaid) && l.paidBefore(in.OrderNo, in.TradeNo) {
		err = nil // paid by this trade_no before Redis lost its record of it: a replay
	}
	res, err := toOrderState(in.OrderNo, domain.StatePaid, err)
	if err != nil {
		return nil, err
	}
	res.TradeNo = in.TradeNo
	return res, nil
}

// paidBefore reports whether MySQL keeps tradeNo with the order (a failed read: no).
func (l *ConfirmLogic) paidBefore(orderNo, tradeNo string) bool {
	o, err := l.svcCtx.Orders.FindOneByOrderNo(l.ctx, orderNo)
	if err != nil {
		return false
	}
	return o.TradeNo == tradeNo && o.Status == domain.StatePaid
}
