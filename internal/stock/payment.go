package stock

import (
	"context"
	"time"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/xerr"
)

// tradeClaimTTL is how long a trade_no stays claimed by the order it paid: a trade_no is refused
// for any other order in that time (TRADE_NO_REUSED), in any activity. The activity's own
// record (Keys.Trades) and MySQL's keep it with the order for longer.
const tradeClaimTTL = 30 * 24 * time.Hour

// Pay confirms orderNo as the provider's payment p, through confirm.lua like the buyer's own pay
// (the same entry, with the trade_no): the same trade_no again is a replay (nil), another one
// for a paid order ORDER_PAID, a trade_no that paid another order TRADE_NO_REUSED, an amount
// that is not quantity x price AMOUNT_MISMATCH. Nothing changes on any refusal. The entries are
// those the answer waits on (Confirm).
func (s *Store) Pay(ctx context.Context, orderNo string, p domain.Payment) ([]Entry, error) {
	aid, err := s.CheckOrderNo(orderNo)
	if err != nil {
		return nil, err
	}
	if err := domain.CheckTradeNo(p.TradeNo); err != nil {
		return nil, err
	}
	if err := domain.CheckAmount(p.Amount); err != nil {
		return nil, err
	}
	if p.Price < 0 || p.Price > domain.MaxPrice {
		return nil, xerr.Newf(xerr.InvalidArgument, "bad price %d", p.Price)
	}
	claimed, err := s.claimTrade(ctx, p.TradeNo, orderNo)
	if err != nil {
		return nil, err
	}
	k := s.keys
	res, err := s.run(ctx, confirmScript, aid,
		[]string{k.Stock(aid), k.OrdersHash(aid), k.Events(aid), k.Trades(aid)},
		argvOf(confirmArgs{ActivityID: aid, OrderNo: orderNo, Short: shortNo(orderNo), TraceParent: event.TraceParent(ctx),
			TradeNo: p.TradeNo, Amount: p.Amount, Price: p.Price})...)
	if err != nil {
		if claimed {
			s.unclaimTrade(ctx, p.TradeNo)
		}
		return nil, err
	}
	return changeEntries(aid, res) // no entry id: paid before by this trade_no
}

// claimTrade claims tradeNo for orderNo (claimed: this call set it); TRADE_NO_REUSED when it is
// claimed by another order.
func (s *Store) claimTrade(ctx context.Context, tradeNo, orderNo string) (claimed bool, err error) {
	key := s.keys.tradeClaim(tradeNo)
	ok, err := s.rds.SetnxExCtx(ctx, key, orderNo, int(tradeClaimTTL/time.Second))
	if err != nil {
		return false, dep(err)
	}
	if ok {
		return true, nil
	}
	holder, err := s.rds.GetCtx(ctx, key)
	if err != nil {
		return false, dep(err)
	}
	if holder != "" && holder != orderNo {
		return false, xerr.ErrTradeNoReused
	}
	return false, nil
}

// unclaimTrade releases a claim whose payment was refused. A failure leaves the claim to its
// TTL: the trade_no paid nothing, and a retry by its own order still passes.
func (s *Store) unclaimTrade(ctx context.Context, tradeNo string) {
	_, _ = s.rds.DelCtx(ctx, s.keys.tradeClaim(tradeNo))
}
