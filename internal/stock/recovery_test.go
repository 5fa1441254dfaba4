package stock_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/stock"
)

// Wipe deletes, once the stock hash is gone, the activity's orders hash, buyers hash (holdings
// and request ids) and pending zset; another activity's keys stay. With the stock hash present
// it deletes nothing (ErrAlreadyWarm).
func TestWipe(t *testing.T) {
	e := stocktest.New(t)
	aid := warmUnchecked(t, e, 2000)
	other := e.Warm(stocktest.Spec{Total: 10, Limit: 1, PayTimeout: 900})
	const n = 600
	for i := 1; i <= n; i++ {
		if _, err := stocktest.Reserve(ctx, e.Store, aid, int64(i), 1, reqID(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := stocktest.Reserve(ctx, e.Store, other, 1, 1, reqID(1)); err != nil {
		t.Fatal(err)
	}
	before := e.Dump()
	if err := e.Store.Recovery().Wipe(ctx, aid); !errors.Is(err, stock.ErrAlreadyWarm) {
		t.Fatalf("wipe of a warm activity: %v, want ErrAlreadyWarm", err)
	}
	if after := e.Dump(); len(after) != len(before) {
		t.Fatalf("wipe of a warm activity changed %d keys", len(before)-len(after))
	}
	if _, err := e.Redis.Del(e.Keys.Stock(aid)); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.Recovery().Wipe(ctx, aid); err != nil {
		t.Fatal(err)
	}
	k := e.Keys
	left := 0
	for key := range e.Dump() {
		if strings.HasPrefix(key, strings.TrimSuffix(k.Stock(aid), "stock")) && key != k.Events(aid) {
			left++
			t.Errorf("left after the wipe: %s", key)
		}
	}
	for _, key := range []string{k.Stock(other), k.OrdersHash(other), k.Buyers(other), k.Pending(other)} {
		if ok, _ := e.Redis.Exists(key); !ok {
			t.Errorf("another activity's %s is gone", key)
		}
	}
	if _, err := e.Store.Order(ctx, mustOrderNo(t, e, other)); err != nil {
		t.Errorf("another activity's order: %v", err)
	}
	if left > 0 {
		t.Fatalf("%d keys of %d orders left", left, n)
	}
}

func TestLost(t *testing.T) {
	e := stocktest.New(t)
	aid := warmUnchecked(t, e, 10)
	st, err := e.Store.Stock(ctx, aid)
	if err != nil {
		t.Fatal(err)
	}
	if gone, err := e.Store.Recovery().Lost(ctx, aid, st.Epoch+1); err != nil || gone {
		t.Fatalf("lost of another epoch: %v %v, want nothing deleted", gone, err)
	}
	if _, err := e.Store.Stock(ctx, aid); err != nil {
		t.Fatalf("stock hash after a refused lost: %v", err)
	}
	if gone, err := e.Store.Recovery().Lost(ctx, aid, st.Epoch); err != nil || !gone {
		t.Fatalf("lost of its epoch: %v %v, want deleted", gone, err)
	}
	if _, err := e.Store.Stock(ctx, aid); !errors.Is(err, stock.ErrNotWarm) {
		t.Fatalf("stock hash after lost: %v, want ErrNotWarm", err)
	}
}
