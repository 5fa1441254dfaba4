package stock_test

import (
	"errors"
	"testing"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
)

// TestProviderPayChecksQuantityTimesPrice: a provider's notification pays an order of 3 units
// at 50 only for 150. An amount of one unit's price, or the price and amount swapped in the
// script's arguments, is AMOUNT_MISMATCH and changes nothing.
func TestProviderPayChecksQuantityTimesPrice(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 10, Limit: 5, PayTimeout: 60})
	r, err := stocktest.Reserve(ctx, e.Store, aid, 7, 3, "req-pay-amount")
	if err != nil {
		t.Fatal(err)
	}
	for _, amount := range []int64{50, 3, 149, 151} {
		_, err := e.Store.Pay(ctx, r.OrderNo, domain.Payment{TradeNo: "trade-amount-1", Amount: amount, Price: 50})
		if !errors.Is(err, xerr.ErrAmountMismatch) {
			t.Fatalf("amount %d for 3 x 50: %v, want AMOUNT_MISMATCH", amount, err)
		}
	}
	if st := orderState(t, e, r.OrderNo); st != domain.StateReserved {
		t.Fatalf("after refused payments the order is %q, want %q", st, domain.StateReserved)
	}
	paid := domain.Payment{TradeNo: "trade-amount-1", Amount: 150, Price: 50}
	if _, err := e.Store.Pay(ctx, r.OrderNo, paid); err != nil {
		t.Fatalf("150 for 3 x 50: %v", err)
	}
	if st := orderState(t, e, r.OrderNo); st != domain.StatePaid {
		t.Fatalf("after the payment the order is %q, want %q", st, domain.StatePaid)
	}
}

func orderState(t *testing.T, e *stocktest.Env, orderNo string) string {
	t.Helper()
	o, err := e.Store.Order(ctx, orderNo)
	if err != nil {
		t.Fatal(err)
	}
	return o.State
}
