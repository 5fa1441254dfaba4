package stock_test

import (
	"testing"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/domain"
)

// Every key a reservation writes expires with the activity: the orders hash, the buyers hash
// and the pending zset, which reserve.lua gives an EXPIREAT only when it may have created
// them: the first reservation, and pending again after it emptied (and vanished).
func TestReservationKeysExpireWithTheActivity(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 10, Limit: 3})
	exp, err := e.Raw.ExpireTime(ctx, e.Keys.Stock(aid)).Result()
	if err != nil || exp <= 0 {
		t.Fatalf("stock hash expire time %v, %v", exp, err)
	}
	check := func(when string) {
		t.Helper()
		for _, k := range []string{e.Keys.Pending(aid), e.Keys.OrdersHash(aid), e.Keys.Buyers(aid)} {
			got, err := e.Raw.ExpireTime(ctx, k).Result()
			if err != nil || got != exp {
				t.Fatalf("%s: %s expires at %v (%v), want %v like the stock hash", when, k, got, err, exp)
			}
		}
	}
	r1, err := e.Store.Reserve(ctx, aid, 1, 1, reqID(1))
	if err != nil {
		t.Fatal(err)
	}
	check("first reservation")
	r2, _ := e.Store.Reserve(ctx, aid, 1, 1, reqID(2))
	check("second reservation")
	for _, o := range []string{r1.OrderNo, r2.OrderNo} {
		if err := e.Store.Release(ctx, o, 1, domain.StateCancelled); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := e.Raw.Exists(ctx, e.Keys.Pending(aid)).Result(); n != 0 {
		t.Fatal("pending still exists with nothing reserved")
	}
	if _, err := e.Store.Reserve(ctx, aid, 2, 1, reqID(3)); err != nil {
		t.Fatal(err)
	}
	check("a reservation after pending emptied")
}
