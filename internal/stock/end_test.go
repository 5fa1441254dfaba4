package stock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
)

// TestEnd: End moves a warm activity's end earlier only, reservations are ENDED from then on
// while a reserved order can still be paid, and a cold activity is left cold.
func TestEnd(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 10})
	r, err := stocktest.Reserve(ctx, e.Store, aid, 1, 1, reqID(1))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	if moved, err := e.Store.End(ctx, aid, now); err != nil || !moved {
		t.Fatalf("end: moved %v, %v", moved, err)
	}
	if moved, err := e.Store.End(ctx, aid, now+3600); err != nil || moved {
		t.Fatalf("a later end: moved %v, %v (want unmoved)", moved, err)
	}
	if s, err := e.Store.Stock(ctx, aid); err != nil || s.End != now {
		t.Fatalf("stock after the end: %+v %v", s, err)
	}
	if _, err := stocktest.Reserve(ctx, e.Store, aid, 2, 1, reqID(2)); !errors.Is(err, xerr.ErrEnded) {
		t.Fatalf("reserve after the end: %v", err)
	}
	if _, err := e.Store.Confirm(ctx, r.OrderNo, 1); err != nil {
		t.Fatalf("pay after the end: %v", err)
	}
	cold := aid + 1
	if moved, err := e.Store.End(ctx, cold, now); err != nil || moved {
		t.Fatalf("cold: moved %v, %v", moved, err)
	}
	if _, err := e.Store.Stock(ctx, cold); !errors.Is(err, stock.ErrNotWarm) {
		t.Fatalf("a cold activity was written: %v", err)
	}
}
