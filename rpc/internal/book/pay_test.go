package book_test

import (
	"fmt"
	"testing"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/internal/book"
)

// pay is the provider's payment of amount under trade_no tn (made unique per activity).
func pay(t *testing.T, b book.Book, aid int64, orderNo, tn string, amount int64, w xerr.Code) {
	t.Helper()
	err := b.Pay(ctx, orderNo, domain.Payment{TradeNo: fmt.Sprintf("%s-%d", tn, aid), Amount: amount, Price: 150})
	want(t, fmt.Sprintf("pay %s by %s (%d)", orderNo, tn, amount), err, w)
}

// payCases: the provider's payment, answered alike by both books (unit price 150).
var payCases = []contractCase{
	{"provider: pays once, replays, refuses another trade_no", open(5, 3, 600), func(t *testing.T, b book.Book,
		aid int64) {
		r := reserve(t, b, aid, 1, 2, 1, "OK")
		pay(t, b, aid, r.OrderNo, "tr-a", 299, xerr.AmountMismatch)
		pay(t, b, aid, r.OrderNo, "tr-a", 300, "OK")
		pay(t, b, aid, r.OrderNo, "tr-a", 300, "OK")
		pay(t, b, aid, r.OrderNo, "tr-b", 300, xerr.OrderPaid)
		want(t, "cancel a paid order", b.Release(ctx, r.OrderNo, 1, domain.StateCancelled), xerr.OrderPaid)
	}},
	{"provider: a trade_no pays one order", open(5, 3, 600), func(t *testing.T, b book.Book, aid int64) {
		r1, r2 := reserve(t, b, aid, 1, 1, 1, "OK"), reserve(t, b, aid, 2, 1, 2, "OK")
		pay(t, b, aid, r1.OrderNo, "tr-c", 150, "OK")
		pay(t, b, aid, r2.OrderNo, "tr-c", 150, xerr.TradeNoReused)
		want(t, "cancel the other order", b.Release(ctx, r2.OrderNo, 2, domain.StateCancelled), "OK")
	}},
	{"provider: closed and paid orders", open(5, 3, 600), func(t *testing.T, b book.Book, aid int64) {
		r1, r2 := reserve(t, b, aid, 1, 1, 1, "OK"), reserve(t, b, aid, 2, 1, 2, "OK")
		want(t, "cancel", b.Release(ctx, r1.OrderNo, 1, domain.StateCancelled), "OK")
		pay(t, b, aid, r1.OrderNo, "tr-d", 150, xerr.OrderClosed)
		want(t, "the buyer's own pay", b.Confirm(ctx, r2.OrderNo, 2), "OK")
		pay(t, b, aid, r2.OrderNo, "tr-e", 150, xerr.OrderPaid)
		pay(t, b, aid, domain.NewOrderNo(aid), "tr-f", 150, xerr.OrderNotFound)
	}},
}
