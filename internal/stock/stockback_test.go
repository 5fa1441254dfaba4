package stock_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/domain"
)

// Every script that returns stock to remaining publishes the activity id on the
// stock-back channel; nothing else does.
func TestStockBackIsPublished(t *testing.T) {
	e := stocktest.New(t)
	ps := e.Raw.Subscribe(ctx, e.Keys.StockBack())
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil { // the subscription confirmation
		t.Fatal(err)
	}
	msgs := ps.Channel()
	expect := func(what string, aid int64, want bool) {
		t.Helper()
		select {
		case m := <-msgs:
			if !want {
				t.Fatalf("%s published %q", what, m.Payload)
			}
			if m.Payload != domainID(aid) {
				t.Fatalf("%s published %q, want %d", what, m.Payload, aid)
			}
		case <-time.After(300 * time.Millisecond):
			if want {
				t.Fatalf("%s published nothing", what)
			}
		}
	}
	aid := e.Warm(stocktest.Spec{Total: 5, Limit: 5, PayTimeout: 1})
	r1, err := stocktest.Reserve(ctx, e.Store, aid, 1, 1, reqID(1))
	if err != nil {
		t.Fatal(err)
	}
	expect("reserve", aid, false)
	r3, _ := stocktest.Reserve(ctx, e.Store, aid, 3, 1, reqID(3))
	if _, err := e.Store.Confirm(ctx, r3.OrderNo, 3); err != nil {
		t.Fatal(err)
	}
	expect("confirm", aid, false)
	if _, err := e.Store.Release(ctx, r1.OrderNo, 1, domain.StateCancelled); err != nil {
		t.Fatal(err)
	}
	expect("cancel", aid, true)
	if _, err := e.Store.Release(ctx, r1.OrderNo, 1, domain.StateCancelled); err != nil {
		t.Fatal(err)
	}
	expect("a repeated cancel", aid, false)
	if _, _, err := e.Store.Adjust(ctx, aid, -1, "", ""); err != nil {
		t.Fatal(err)
	}
	expect("adjust -", aid, false)
	if _, _, err := e.Store.Adjust(ctx, aid, 2, "", ""); err != nil {
		t.Fatal(err)
	}
	expect("adjust +", aid, true)
	// r2 is reserved here, its pay timeout (1 s) from now: reserved before the expects above
	// (0.9 s of waits for no message), a loaded machine found it due already (5 of 20 runs
	// beside a CPU spinner: "expired [r2] before due").
	r2, err := stocktest.Reserve(ctx, e.Store, aid, 2, 1, reqID(2))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := e.Store.ExpireDue(ctx, aid, 10); len(got) != 0 {
		t.Fatalf("expired %v before due", got)
	}
	expect("expire_due with nothing due", aid, false)
	time.Sleep(1100 * time.Millisecond)
	if got, err := e.Store.ExpireDue(ctx, aid, 10); err != nil || len(got) != 1 || got[0] != r2.OrderNo {
		t.Fatalf("expired %v, %v", got, err)
	}
	expect("expiry", aid, true)
	e.CheckInvariant(aid)
}

func domainID(aid int64) string { return strconv.FormatInt(aid, 10) }
