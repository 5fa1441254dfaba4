package stock_test

import (
	"testing"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/stock"
)

// ScanOrders puts the orders back as they were at the sighting: one reserved after it is left
// out. A sighting of a cold activity (no stock hash, no change count) takes them as they are.
func TestScanOrdersAsSighted(t *testing.T) {
	e := stocktest.New(t)
	aid := warmUnchecked(t, e, 10) // its stock hash is deleted below
	sight := func() stock.Sighting {
		t.Helper()
		sg, err := e.Store.Sight(ctx, aid)
		if err != nil {
			t.Fatal(err)
		}
		return sg
	}
	scan := func(sg stock.Sighting) int {
		t.Helper()
		orders, next, err := e.Store.ScanOrders(ctx, sg, 0, 1000)
		if err != nil || next != 0 {
			t.Fatalf("scan: %v (next %d)", err, next)
		}
		return len(orders)
	}
	for uid := int64(1); uid <= 4; uid++ {
		if uid == 4 {
			sg := sight()
			reserveOne(t, e, aid, uid) // after the sighting
			if n := scan(sg); n != 3 {
				t.Fatalf("warm: %d orders, want the 3 reserved before the sighting", n)
			}
			continue
		}
		reserveOne(t, e, aid, uid)
	}
	if _, err := e.Redis.Del(e.Keys.Stock(aid)); err != nil {
		t.Fatal(err)
	}
	if n := scan(sight()); n != 4 {
		t.Fatalf("cold: %d orders, want all 4", n)
	}
}

func reserveOne(t *testing.T, e *stocktest.Env, aid, uid int64) {
	t.Helper()
	if _, err := stocktest.Reserve(ctx, e.Store, aid, uid, 1, reqID(int(uid))); err != nil {
		t.Fatal(err)
	}
}
