package stock_test

import (
	"math/rand"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/stock"
)

// Every key a reservation writes expires with the activity: the orders hash and the buyers
// hash, which reserve.lua gives an EXPIREAT only when it may have created them (the first
// reservation), and the pending zset, also after the expiry job emptied it (and it vanished).
func TestReservationKeysExpireWithTheActivity(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 10, Limit: 3, PayTimeout: 1})
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
	r1, err := stocktest.Reserve(ctx, e.Store, aid, 1, 1, reqID(1))
	if err != nil {
		t.Fatal(err)
	}
	check("first reservation")
	r2, _ := stocktest.Reserve(ctx, e.Store, aid, 1, 1, reqID(2))
	check("second reservation")
	if _, err := e.Store.Release(ctx, r1.OrderNo, 1, domain.StateCancelled); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	if done, err := e.Store.ExpireDue(ctx, aid, 10); err != nil || !slices.Equal(done, []string{r2.OrderNo}) {
		t.Fatalf("expired %v (%v), want %s", done, err, r2.OrderNo)
	}
	if n, _ := e.Raw.Exists(ctx, e.Keys.Pending(aid)).Result(); n != 0 {
		t.Fatal("pending still exists with nothing reserved, after the expiry")
	}
	if _, err := stocktest.Reserve(ctx, e.Store, aid, 2, 1, reqID(3)); err != nil {
		t.Fatal(err)
	}
	check("a reservation after pending emptied")
}

// A reservation batch is one pending member: the expiry passes over its paid and cancelled
// orders, expires the rest at most limit a call, and removes the member only once none of
// its orders is left reserved.
func TestExpireDueBatchMember(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 100, PayTimeout: 1})
	items := make([]domain.ReserveItem, 40)
	for i := range items {
		items[i] = domain.ReserveItem{UID: int64(i + 1), Qty: 1, RequestID: reqID(i)}
	}
	res, err := e.Store.ReserveBatch(ctx, aid, items, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res[:15] {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		settle := func() error { _, err := e.Store.Confirm(ctx, r.OrderNo, items[i].UID); return err }
		if i >= 10 {
			settle = func() error {
				_, err := e.Store.Release(ctx, r.OrderNo, items[i].UID, domain.StateCancelled)
				return err
			}
		}
		if err := settle(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1100 * time.Millisecond)
	members := func() int64 { n, _ := e.Raw.ZCard(ctx, e.Keys.Pending(aid)).Result(); return n }
	first, err := e.Store.ExpireDue(ctx, aid, 10)
	if err != nil || len(first) != 10 || members() != 1 {
		t.Fatalf("first call: expired %d (%v), %d pending members; want 10 and the member kept", len(first), err,
			members())
	}
	rest, err := e.Store.ExpireDue(ctx, aid, 100)
	if err != nil || len(rest) != 15 || members() != 0 {
		t.Fatalf("second call: expired %d (%v), %d pending members; want 15 and none", len(rest), err, members())
	}
	if again, err := e.Store.ExpireDue(ctx, aid, 100); err != nil || len(again) != 0 {
		t.Fatalf("third call: %v, %v", again, err)
	}
	want := map[string]bool{}
	for _, r := range res[15:] {
		want[r.OrderNo] = true
	}
	for _, no := range append(first, rest...) {
		if !want[no] {
			t.Fatalf("%s expired: not one of the reserved orders, or twice", no)
		}
		delete(want, no)
	}
	for i, r := range res {
		o, _ := e.Store.Order(ctx, r.OrderNo)
		h, _ := e.Redis.Hget(e.Keys.Buyers(aid), stock.HeldField(items[i].UID))
		if wantHeld := map[bool]string{true: "1", false: "0"}[i < 10]; h != wantHeld {
			t.Fatalf("buyer %d (order %s) holds %q, want %s", items[i].UID, o.State, h, wantHeld)
		}
	}
	if c := e.CheckInvariant(aid); c.Locked != 0 || c.Sold != 10 || c.Remaining != 90 {
		t.Fatalf("counters %+v", c)
	}
	if n := e.OutboxCount(aid)[event.Expired]; n != 25 {
		t.Fatalf("%d expired entries, want 25", n)
	}
}

// Concurrent expiry jobs over batch members of every size release each order once.
func TestExpireDueBatchMembersConcurrently(t *testing.T) {
	e := stocktest.New(t)
	const total = 400
	aid := e.Warm(stocktest.Spec{Total: total, PayTimeout: 1})
	rng := rand.New(rand.NewSource(1))
	for made := 0; made < total; {
		items := make([]domain.ReserveItem, min(1+rng.Intn(40), total-made))
		for i := range items {
			items[i] = domain.ReserveItem{UID: int64(made + 1), Qty: 1, RequestID: reqID(made)}
			made++
		}
		if _, err := e.Store.ReserveBatch(ctx, aid, items, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1100 * time.Millisecond)
	var mu sync.Mutex
	seen := map[string]bool{}
	race(6, func(int) {
		for calls := 0; ; calls++ {
			if calls > total {
				t.Error("the expiry never runs out of orders")
				return
			}
			done, err := e.Store.ExpireDue(ctx, aid, 7)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			for _, no := range done {
				if seen[no] {
					t.Errorf("%s expired twice", no)
				}
				seen[no] = true
			}
			mu.Unlock()
			if len(done) == 0 {
				return
			}
		}
	})
	if len(seen) != total {
		t.Fatalf("expired %d, want %d", len(seen), total)
	}
	if n, _ := e.Raw.Exists(ctx, e.Keys.Pending(aid)).Result(); n != 0 {
		t.Fatal("pending left after everything expired")
	}
	if c := e.CheckInvariant(aid); c.Remaining != total || e.OutboxCount(aid)[event.Expired] != total {
		t.Fatalf("counters %+v, outbox %v", c, e.OutboxCount(aid))
	}
}
