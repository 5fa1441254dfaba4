package book

import (
	"context"
	"errors"
	"time"

	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
)

// Pay confirms an order as the payment provider's payment p, with the Redis book's answers
// (stock.Store.Pay): the order's row keeps the trade_no, and the trade_no is looked up in the
// orders for TRADE_NO_REUSED.
func (b *MySQL) Pay(ctx context.Context, orderNo string, p domain.Payment) error {
	if err := domain.CheckTradeNo(p.TradeNo); err != nil {
		return err
	}
	aid, err := b.Store.CheckOrderNo(orderNo)
	if err != nil {
		return err
	}
	return b.tx(ctx, aid, func(ctx context.Context, s sqlx.Session) error {
		o, err := b.Orders.FindForUpdate(ctx, s, orderNo)
		if errors.Is(err, model.ErrNotFound) {
			return xerr.ErrOrderNotFound
		}
		if err != nil {
			return err
		}
		switch {
		case int64(o.Quantity)*p.Price != p.Amount:
			return xerr.ErrAmountMismatch
		case o.TradeNo == p.TradeNo && o.Status == domain.StatePaid:
			return nil // the same notification again
		case o.Status == domain.StatePaid:
			return xerr.ErrOrderPaid
		case o.Status != domain.StateReserved, time.Now().UnixMilli() >= o.ExpireAt*1000:
			return xerr.ErrOrderClosed
		}
		other, err := b.Orders.FindOrderNoByTradeNo(ctx, s, p.TradeNo)
		if err != nil {
			return err
		}
		if other != "" && other != orderNo {
			return xerr.ErrTradeNoReused
		}
		if err := b.move(ctx, s, aid, o, domain.StatePaid); err != nil {
			return err
		}
		return b.Orders.SetTradeNos(ctx, s, map[string]string{orderNo: p.TradeNo})
	})
}
