package stock_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
)

var ctx = context.Background()

func reqID(i int) string { return fmt.Sprintf("req-%08d", i) }

// race runs n workers released together and waits for them.
func race(n int, work func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			work(i)
		}(i)
	}
	close(start)
	wg.Wait()
}

func TestReserveNeverOversells(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 100})

	var mu sync.Mutex
	orders := map[string]bool{}
	var soldOut, other atomic.Int64
	race(1000, func(i int) {
		r, err := e.Store.Reserve(ctx, aid, int64(i+1), 1, reqID(i))
		switch {
		case err == nil:
			mu.Lock()
			orders[r.OrderNo] = true
			mu.Unlock()
		case errors.Is(err, xerr.ErrSoldOut):
			soldOut.Add(1)
		default:
			other.Add(1)
			t.Errorf("buyer %d: %v", i, err)
		}
	})
	if len(orders) != 100 || soldOut.Load() != 900 || other.Load() != 0 {
		t.Fatalf("reserved %d distinct orders, %d sold out, %d other; want 100/900/0",
			len(orders), soldOut.Load(), other.Load())
	}
	c := e.CheckInvariant(aid)
	if c.Remaining != 0 || c.Locked != 100 || c.Sold != 0 {
		t.Fatalf("counters %+v, want remaining 0 locked 100", c)
	}
	if got := e.OutboxCount(aid); got[event.Reserved] != 100 || len(got) != 1 {
		t.Fatalf("outbox %v, want 100 reserved", got)
	}
}

func TestReserveRandomQuantitiesWithLimits(t *testing.T) {
	e := stocktest.New(t)
	const total, limit = 500, 7
	aid := e.Warm(stocktest.Spec{Total: total, Limit: limit})

	const users = 150
	held := make([]atomic.Int64, users+1)
	var reservedQty atomic.Int64
	race(2000, func(i int) {
		uid := int64(rand.Intn(users) + 1)
		qty := int64(rand.Intn(5) + 1)
		r, err := e.Store.Reserve(ctx, aid, uid, qty, reqID(i))
		switch {
		case err == nil:
			held[uid].Add(r.Quantity)
			reservedQty.Add(r.Quantity)
			if r.Remaining < 0 {
				t.Errorf("remaining went negative: %d", r.Remaining)
			}
		case errors.Is(err, xerr.ErrSoldOut), errors.Is(err, xerr.ErrLimitExceeded):
		default:
			t.Errorf("reserve: %v", err)
		}
	})
	c := e.CheckInvariant(aid)
	if reservedQty.Load() != c.Locked || c.Locked > total {
		t.Fatalf("reserved %d, counters %+v", reservedQty.Load(), c)
	}
	for uid := 1; uid <= users; uid++ {
		if h := held[uid].Load(); h > limit {
			t.Fatalf("user %d holds %d > limit %d", uid, h, limit)
		}
		v, _ := e.Redis.Get(e.Keys.User(aid, int64(uid)))
		if want := held[uid].Load(); want > 0 && v != fmt.Sprint(want) {
			t.Fatalf("user %d key %q, want %d", uid, v, want)
		}
	}
	if got := e.OutboxCount(aid)[event.Reserved]; int64(got) == 0 {
		t.Fatal("no reserved events")
	}
}

func TestReserveIsIdempotentPerRequestID(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 10, Limit: 5})

	var mu sync.Mutex
	seen := map[string]int{}
	var replays atomic.Int64
	race(50, func(int) {
		r, err := e.Store.Reserve(ctx, aid, 42, 2, "same-request-id")
		if err != nil {
			t.Errorf("reserve: %v", err)
			return
		}
		if r.Quantity != 2 || r.ExpireAt == 0 {
			t.Errorf("reservation %+v", r)
		}
		if r.Replay {
			replays.Add(1)
		}
		mu.Lock()
		seen[r.OrderNo]++
		mu.Unlock()
	})
	if len(seen) != 1 || replays.Load() != 49 {
		t.Fatalf("orders %v, replays %d; want one order and 49 replays", seen, replays.Load())
	}
	c := e.CheckInvariant(aid)
	if c.Remaining != 8 || c.Locked != 2 {
		t.Fatalf("counters %+v, want one deduction of 2", c)
	}
	if got := e.OutboxCount(aid); got[event.Reserved] != 1 {
		t.Fatalf("outbox %v, want exactly one reserved", got)
	}
	// Another user with the same request id gets an order of their own.
	r, err := e.Store.Reserve(ctx, aid, 43, 1, "same-request-id")
	if err != nil || r.Replay {
		t.Fatalf("other user: %+v %v", r, err)
	}
}

func TestReserveRules(t *testing.T) {
	e := stocktest.New(t)
	live := e.Warm(stocktest.Spec{Total: 5, Limit: 2})
	upcoming := e.Warm(stocktest.Spec{ID: live + 1, Total: 5, Start: time.Now().Add(time.Hour),
		End: time.Now().Add(2 * time.Hour)})
	ended := e.Warm(stocktest.Spec{ID: live + 2, Total: 5, Start: time.Now().Add(-2 * time.Hour),
		End: time.Now().Add(-time.Second)})

	if _, err := e.Store.Reserve(ctx, live, 1, 2, reqID(1)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		aid  int64
		uid  int64
		qty  int64
		want error
	}{
		{"limit counts what the user holds", live, 1, 1, xerr.ErrLimitExceeded},
		{"limit on a single request", live, 2, 3, xerr.ErrLimitExceeded},
		{"not started", upcoming, 1, 1, xerr.ErrNotStarted},
		{"ended", ended, 1, 1, xerr.ErrEnded},
		{"not warm (unknown to Redis)", live + 99, 1, 1, stock.ErrNotWarm},
		{"sold out when remaining < quantity", live, 3, 2, nil},
		{"sold out", live, 4, 2, xerr.ErrSoldOut},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := e.Dump()
			_, err := e.Store.Reserve(ctx, tc.aid, tc.uid, tc.qty, reqID(100+i))
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if tc.want != nil {
				if after := e.Dump(); fmt.Sprint(after) != fmt.Sprint(before) {
					t.Fatalf("a rejected reservation changed Redis")
				}
			}
		})
	}
	if !errors.Is(stock.ErrNotWarm, xerr.ErrBusy) {
		t.Fatal("not warm must surface as BUSY")
	}
}

func TestBadInputChangesNothing(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 5, Limit: 5})
	r, err := e.Store.Reserve(ctx, aid, 1, 1, reqID(1))
	if err != nil {
		t.Fatal(err)
	}
	long := make([]byte, 65)
	for i := range long {
		long[i] = 'a'
	}
	calls := []struct {
		name string
		call func() error
		want xerr.Code
	}{
		{"zero quantity", func() error { _, err := e.Store.Reserve(ctx, aid, 2, 0, reqID(2)); return err }, xerr.InvalidArgument},
		{"negative quantity", func() error { _, err := e.Store.Reserve(ctx, aid, 2, -1, reqID(2)); return err }, xerr.InvalidArgument},
		{"huge quantity", func() error { _, err := e.Store.Reserve(ctx, aid, 2, 1<<62, reqID(2)); return err }, xerr.InvalidArgument},
		{"empty request id", func() error { _, err := e.Store.Reserve(ctx, aid, 2, 1, ""); return err }, xerr.InvalidArgument},
		{"short request id", func() error { _, err := e.Store.Reserve(ctx, aid, 2, 1, "abc"); return err }, xerr.InvalidArgument},
		{"oversized request id", func() error { _, err := e.Store.Reserve(ctx, aid, 2, 1, string(long)); return err }, xerr.InvalidArgument},
		{"request id with bad chars", func() error { _, err := e.Store.Reserve(ctx, aid, 2, 1, "abc def ghi"); return err }, xerr.InvalidArgument},
		{"zero uid", func() error { _, err := e.Store.Reserve(ctx, aid, 0, 1, reqID(2)); return err }, xerr.InvalidArgument},
		{"zero activity", func() error { _, err := e.Store.Reserve(ctx, 0, 2, 1, reqID(2)); return err }, xerr.InvalidArgument},
		{"confirm malformed order", func() error { return e.Store.Confirm(ctx, "nope", 1) }, xerr.InvalidArgument},
		{"confirm unknown order", func() error { return e.Store.Confirm(ctx, fmt.Sprintf("%d-1700000000000deadbeef", aid), 1) }, xerr.OrderNotFound},
		{"confirm another user's order", func() error { return e.Store.Confirm(ctx, r.OrderNo, 2) }, xerr.OrderNotFound},
		{"cancel another user's order", func() error { return e.Store.Release(ctx, r.OrderNo, 2, domain.StateCancelled) }, xerr.OrderNotFound},
		{"release to a bad state", func() error { return e.Store.Release(ctx, r.OrderNo, 1, "paid") }, xerr.InvalidArgument},
		{"expire before due", func() error { return e.Store.Expire(ctx, r.OrderNo) }, xerr.NotDue},
		{"adjust by zero", func() error { _, err := e.Store.Adjust(ctx, aid, 0); return err }, xerr.InvalidArgument},
		{"adjust by huge", func() error { _, err := e.Store.Adjust(ctx, aid, 1<<40); return err }, xerr.InvalidArgument},
		{"withdraw more than remaining", func() error { _, err := e.Store.Adjust(ctx, aid, -5); return err }, xerr.InsufficientStock},
		{"expire batch too large", func() error { _, err := e.Store.ExpireDue(ctx, aid, 5000); return err }, xerr.InvalidArgument},
		{"expire batch zero", func() error { _, err := e.Store.ExpireDue(ctx, aid, 0); return err }, xerr.InvalidArgument},
		{"order read malformed", func() error { _, err := e.Store.Order(ctx, "1-xyz"); return err }, xerr.InvalidArgument},
	}
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			before := e.Dump()
			err := tc.call()
			if got := xerr.CodeOf(err); got != tc.want {
				t.Fatalf("got %v (%s), want %s", err, got, tc.want)
			}
			if after := e.Dump(); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("Redis changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

func TestOrderTransitions(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 100, Limit: 100, PayTimeout: 1})
	reserve := func(t *testing.T, uid int64) string {
		t.Helper()
		r, err := e.Store.Reserve(ctx, aid, uid, 2, fmt.Sprintf("req-%d-%d", uid, time.Now().UnixNano()))
		if err != nil {
			t.Fatal(err)
		}
		return r.OrderNo
	}
	pay := func(no string) error { return e.Store.Confirm(ctx, no, 1) }
	cancel := func(no string) error { return e.Store.Release(ctx, no, 1, domain.StateCancelled) }
	expire := func(no string) error { return e.Store.Expire(ctx, no) }
	waitDue := func() { time.Sleep(1100 * time.Millisecond) }

	tests := []struct {
		name   string
		steps  []func(string) error
		due    int // wait for expiry before this step index (-1: never)
		want   []error
		state  string
		events []event.Type
	}{
		{"pay", []func(string) error{pay}, -1, []error{nil}, domain.StatePaid, []event.Type{event.Paid}},
		{"pay twice", []func(string) error{pay, pay}, -1, []error{nil, nil}, domain.StatePaid, []event.Type{event.Paid}},
		{"cancel twice", []func(string) error{cancel, cancel}, -1, []error{nil, nil}, domain.StateCancelled, []event.Type{event.Cancelled}},
		{"pay after cancel", []func(string) error{cancel, pay}, -1, []error{nil, xerr.ErrOrderClosed}, domain.StateCancelled, []event.Type{event.Cancelled}},
		{"cancel after pay", []func(string) error{pay, cancel}, -1, []error{nil, xerr.ErrOrderPaid}, domain.StatePaid, []event.Type{event.Paid}},
		{"expire before due", []func(string) error{expire}, -1, []error{xerr.ErrNotDue}, domain.StateReserved, nil},
		{"expire after paid", []func(string) error{pay, expire}, 1, []error{nil, xerr.ErrOrderPaid}, domain.StatePaid, []event.Type{event.Paid}},
		{"expire when due, twice", []func(string) error{expire, expire}, 0, []error{nil, nil}, domain.StateExpired, []event.Type{event.Expired}},
		{"pay after due", []func(string) error{pay}, 0, []error{xerr.ErrOrderClosed}, domain.StateReserved, nil},
		{"pay after expired", []func(string) error{expire, pay}, 0, []error{nil, xerr.ErrOrderClosed}, domain.StateExpired, []event.Type{event.Expired}},
		{"cancel after expired", []func(string) error{expire, cancel}, 0, []error{nil, xerr.ErrOrderClosed}, domain.StateExpired, []event.Type{event.Expired}},
		{"expire after cancel", []func(string) error{cancel, expire}, 1, []error{nil, xerr.ErrOrderClosed}, domain.StateCancelled, []event.Type{event.Cancelled}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			no := reserve(t, 1)
			before := len(e.Outbox(aid))
			for i, step := range tc.steps {
				if i == tc.due {
					waitDue()
				}
				if err := step(no); !errors.Is(err, tc.want[i]) || (err == nil) != (tc.want[i] == nil) {
					t.Fatalf("step %d: got %v, want %v", i, err, tc.want[i])
				}
			}
			o, err := e.Store.Order(ctx, no)
			if err != nil || o.State != tc.state {
				t.Fatalf("state %q (%v), want %q", o.State, err, tc.state)
			}
			var got []event.Type
			for _, ev := range e.Outbox(aid)[before:] {
				if ev.OrderNo != no || ev.Quantity != 2 || ev.UID != 1 || ev.SkuID != 7 {
					t.Fatalf("event %+v does not describe order %s", ev, no)
				}
				got = append(got, ev.Type)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.events) {
				t.Fatalf("events %v, want %v", got, tc.events)
			}
			e.CheckInvariant(aid)
		})
	}
}

func TestUserLimitReturnsOnRelease(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 10, Limit: 2})
	r, err := e.Store.Reserve(ctx, aid, 9, 2, reqID(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.Reserve(ctx, aid, 9, 1, reqID(2)); !errors.Is(err, xerr.ErrLimitExceeded) {
		t.Fatalf("want limit exceeded, got %v", err)
	}
	if err := e.Store.Release(ctx, r.OrderNo, 9, domain.StateCancelled); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.Reserve(ctx, aid, 9, 2, reqID(3)); err != nil {
		t.Fatalf("after cancel the limit is free again: %v", err)
	}
}

func TestPayRacingExpiry(t *testing.T) {
	e := stocktest.New(t)
	const n = 200
	aid := e.Warm(stocktest.Spec{Total: n, PayTimeout: 1})
	nos := make([]string, n)
	due := make([]time.Time, n)
	for i := range nos {
		r, err := e.Store.Reserve(ctx, aid, int64(i+1), 1, reqID(i))
		if err != nil {
			t.Fatal(err)
		}
		nos[i], due[i] = r.OrderNo, time.UnixMilli(r.ExpireAt)
	}
	// Each pay lands within ±20 ms of its order's deadline while expiry workers sweep
	// continuously, so pays and expiries genuinely interleave at the deadline.
	var paid, expired atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, no := range nos {
		wg.Add(1)
		go func(no string, uid int64, at time.Time) {
			defer wg.Done()
			<-start
			time.Sleep(time.Until(at.Add(time.Duration(rand.Intn(40)-20) * time.Millisecond)))
			switch err := e.Store.Confirm(ctx, no, uid); {
			case err == nil:
				paid.Add(1)
			case errors.Is(err, xerr.ErrOrderClosed):
			default:
				t.Errorf("pay %s: %v", no, err)
			}
		}(no, int64(i+1), due[i])
	}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			deadline := due[n-1].Add(2 * time.Second)
			for time.Now().Before(deadline) {
				done, err := e.Store.ExpireDue(ctx, aid, 50)
				if err != nil {
					t.Errorf("expire: %v", err)
					return
				}
				expired.Add(int64(len(done)))
				if pending, _ := e.Redis.Zcard(e.Keys.Pending(aid)); pending == 0 {
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	if paid.Load()+expired.Load() != n {
		t.Fatalf("paid %d + expired %d != %d orders", paid.Load(), expired.Load(), n)
	}
	states := map[string]int{}
	for _, no := range nos {
		o, err := e.Store.Order(ctx, no)
		if err != nil {
			t.Fatal(err)
		}
		states[o.State]++
	}
	if states[domain.StatePaid] != int(paid.Load()) || states[domain.StateExpired] != int(expired.Load()) {
		t.Fatalf("states %v, paid %d expired %d", states, paid.Load(), expired.Load())
	}
	c := e.CheckInvariant(aid)
	if c.Locked != 0 || c.Sold != paid.Load() || c.Remaining != expired.Load() {
		t.Fatalf("counters %+v after paid %d expired %d", c, paid.Load(), expired.Load())
	}
	ev := e.OutboxCount(aid)
	if ev[event.Paid] != int(paid.Load()) || ev[event.Expired] != int(expired.Load()) || ev[event.Reserved] != n {
		t.Fatalf("outbox %v", ev)
	}
	t.Logf("paid %d, expired %d", paid.Load(), expired.Load())
}

func TestExpireDueConcurrentJobsReleaseOnce(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 300, PayTimeout: 1})
	for i := 0; i < 300; i++ {
		if _, err := e.Store.Reserve(ctx, aid, int64(i+1), 1, reqID(i)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1100 * time.Millisecond)
	var released atomic.Int64
	race(6, func(int) {
		for {
			done, err := e.Store.ExpireDue(ctx, aid, 40)
			if err != nil {
				t.Error(err)
				return
			}
			if len(done) == 0 {
				if n, _ := e.Redis.Zcard(e.Keys.Pending(aid)); n == 0 {
					return
				}
			}
			released.Add(int64(len(done)))
		}
	})
	if released.Load() != 300 {
		t.Fatalf("released %d, want 300", released.Load())
	}
	if got := e.OutboxCount(aid)[event.Expired]; got != 300 {
		t.Fatalf("%d expired events, want 300", got)
	}
	if c := e.CheckInvariant(aid); c.Remaining != 300 {
		t.Fatalf("counters %+v", c)
	}
}

func TestAdjust(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 10})
	c, err := e.Store.Adjust(ctx, aid, 5)
	if err != nil || c.Total != 15 || c.Remaining != 15 {
		t.Fatalf("add: %+v %v", c, err)
	}
	c, err = e.Store.Adjust(ctx, aid, -15)
	if err != nil || c.Total != 0 || c.Remaining != 0 {
		t.Fatalf("withdraw all: %+v %v", c, err)
	}
	if _, err := e.Store.Adjust(ctx, aid, -1); !errors.Is(err, xerr.ErrInsufficientStock) {
		t.Fatalf("withdraw below zero: %v", err)
	}
	if _, err := e.Store.Adjust(ctx, aid+1, 1); !errors.Is(err, stock.ErrNotWarm) {
		t.Fatalf("cold activity: %v", err)
	}
	evs := e.Outbox(aid)
	if len(evs) != 2 || evs[0].Type != event.Adjusted || evs[0].Delta != 5 || evs[1].Delta != -15 {
		t.Fatalf("outbox %+v", evs)
	}
	e.CheckInvariant(aid)
}

func TestWarmupNeverOverwritesAndExpires(t *testing.T) {
	e := stocktest.New(t)
	end := time.Now().Add(2 * time.Second)
	aid := e.Warm(stocktest.Spec{Total: 10, End: end})
	if _, err := e.Store.Reserve(ctx, aid, 1, 1, reqID(1)); err != nil {
		t.Fatal(err)
	}
	created, remaining, err := e.Store.Warmup(ctx, stock.Meta{ActivityID: aid, Total: 50, Remaining: 50,
		Start: time.Now().Unix() - 10, End: end.Unix(), Limit: 1, PayTimeout: 10, ExpireAt: end.Unix() + 1})
	if err != nil || created || remaining != 9 {
		t.Fatalf("second warm-up: created=%v remaining=%d err=%v; want live stock 9 untouched", created, remaining, err)
	}
	// Keys expire at the ExpireAt warm-up was given (end + 1 h by stocktest.Warm).
	ttl, err := e.Redis.Ttl(e.Keys.Stock(aid))
	if err != nil || ttl <= 3000 || ttl > 3602 {
		t.Fatalf("stock ttl %d (%v), want about an hour past the end", ttl, err)
	}
	for _, k := range []string{e.Keys.Pending(aid), e.Keys.Orders(aid), e.Keys.User(aid, 1)} {
		if ttl, _ := e.Redis.Ttl(k); ttl <= 0 {
			t.Fatalf("%s has no expiry (%d)", k, ttl)
		}
	}
	e.CheckInvariant(aid)

	// A real expiry, short.
	short := aid + 1
	if _, _, err := e.Store.Warmup(ctx, stock.Meta{ActivityID: short, Total: 1, Remaining: 1,
		Start: time.Now().Unix() - 10, End: time.Now().Unix() + 1, Limit: 1, PayTimeout: 10,
		ExpireAt: time.Now().Unix() + 1}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond)
	if _, err := e.Store.Stock(ctx, short); !errors.Is(err, stock.ErrNotWarm) {
		t.Fatalf("stock did not expire: %v", err)
	}
}

func TestParseOrderNo(t *testing.T) {
	no := domain.NewOrderNo(123)
	if aid, ok := domain.ParseOrderNo(no); !ok || aid != 123 {
		t.Fatalf("%s -> %d %v", no, aid, ok)
	}
	for _, bad := range []string{"", "123", "-abc", "0-12345678", "12-xyz12345", "1-123456789012345678901234567890123456789012345678901234567890123"} {
		if _, ok := domain.ParseOrderNo(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// ReserveBy sells nothing once Redis's clock is past its sell-by (degrade mode's lease):
// ErrLeaseLapsed (BUSY without a cause: not Redis down), nothing written; before it, and
// with no sell-by, it sells; a replay of a request id that already sold answers the order
// whatever the sell-by (nothing is sold again).
func TestReserveBySellBy(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 10, Limit: 5})
	first, err := e.Store.ReserveBy(ctx, aid, 1, 1, "sell-by-0001", time.Now().Add(time.Minute))
	if err != nil || first.Replay {
		t.Fatalf("inside the lease: %+v %v", first, err)
	}
	before := e.Dump()
	_, err = e.Store.ReserveBy(ctx, aid, 2, 1, "sell-by-0002", time.Now().Add(-time.Second))
	var xe *xerr.Error
	if !errors.Is(err, stock.ErrLeaseLapsed) || !errors.As(err, &xe) || xe.Code != xerr.Busy || xe.Cause != nil {
		t.Fatalf("past the lease: %v, want ErrLeaseLapsed", err)
	}
	if after := e.Dump(); len(after) != len(before) {
		t.Fatalf("a lapsed reservation wrote: %d keys -> %d", len(before), len(after))
	}
	if r, err := e.Store.ReserveBy(ctx, aid, 1, 1, "sell-by-0001", time.Now().Add(-time.Second)); err != nil || !r.Replay || r.OrderNo != first.OrderNo {
		t.Fatalf("replay past the lease: %+v %v, want the first order", r, err)
	}
	if _, err := e.Store.ReserveBy(ctx, aid, 3, 1, "sell-by-0003", time.Time{}); err != nil {
		t.Fatalf("no sell-by: %v", err)
	}
	if c := e.CheckInvariant(aid); c.Remaining != 8 || c.Locked != 2 {
		t.Fatalf("counters %+v, want two reservations", c)
	}
}

// Wipe deletes, once the stock hash is gone, every order hash with its request-id and
// buyer keys and the pending and orders sets, over several chunks; another activity's
// keys stay. With the stock hash present it deletes nothing (ErrAlreadyWarm).
func TestWipe(t *testing.T) {
	e := stocktest.New(t)
	aid := warmUnchecked(t, e, 2000)
	other := e.Warm(stocktest.Spec{Total: 10, Limit: 1, PayTimeout: 900})
	n := stock.WipeChunk + 7
	for i := 1; i <= n; i++ {
		if _, err := e.Store.Reserve(ctx, aid, int64(i), 1, reqID(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Store.Reserve(ctx, other, 1, 1, reqID(1)); err != nil {
		t.Fatal(err)
	}
	before := e.Dump()
	if err := e.Store.Wipe(ctx, aid); !errors.Is(err, stock.ErrAlreadyWarm) {
		t.Fatalf("wipe of a warm activity: %v, want ErrAlreadyWarm", err)
	}
	if after := e.Dump(); len(after) != len(before) {
		t.Fatalf("wipe of a warm activity changed %d keys", len(before)-len(after))
	}
	if _, err := e.Redis.Del(e.Keys.Stock(aid)); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.Wipe(ctx, aid); err != nil {
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
	for _, key := range []string{k.Stock(other), k.Order(other, mustOrderNo(t, e, other)), k.User(other, 1), k.Req(other, 1, reqID(1))} {
		if ok, _ := e.Redis.Exists(key); !ok {
			t.Errorf("another activity's %s is gone", key)
		}
	}
	if left > 0 {
		t.Fatalf("%d keys of %d orders left", left, n)
	}
}

// warmUnchecked warms a live activity whose stock hash the test deletes (Env.Warm checks
// the invariant on it at the end).
func warmUnchecked(t *testing.T, e *stocktest.Env, total int64) int64 {
	t.Helper()
	aid := time.Now().UnixNano()%1_000_000_000 + 1
	now := time.Now()
	created, _, err := e.Store.Warmup(ctx, stock.Meta{ActivityID: aid, SkuID: 7, Name: "test", Total: total,
		Remaining: total, Start: now.Add(-time.Minute).Unix(), End: now.Add(time.Hour).Unix(), Limit: 1,
		PayTimeout: 900, ExpireAt: now.Add(2 * time.Hour).Unix()})
	if err != nil || !created {
		t.Fatalf("warm %d: %v %v", aid, created, err)
	}
	return aid
}

// mustOrderNo is the one order number of activity aid.
func mustOrderNo(t *testing.T, e *stocktest.Env, aid int64) string {
	t.Helper()
	nos, err := e.Store.OrderNos(ctx, aid)
	if err != nil || len(nos) != 1 {
		t.Fatalf("orders of %d: %v %v", aid, nos, err)
	}
	return nos[0]
}

// Lost deletes the stock hash only while it is of the epoch given.
func TestLost(t *testing.T) {
	e := stocktest.New(t)
	aid := warmUnchecked(t, e, 10)
	st, err := e.Store.Stock(ctx, aid)
	if err != nil {
		t.Fatal(err)
	}
	if gone, err := e.Store.Lost(ctx, aid, st.Epoch+1); err != nil || gone {
		t.Fatalf("lost of another epoch: %v %v, want nothing deleted", gone, err)
	}
	if _, err := e.Store.Stock(ctx, aid); err != nil {
		t.Fatalf("stock hash after a refused lost: %v", err)
	}
	if gone, err := e.Store.Lost(ctx, aid, st.Epoch); err != nil || !gone {
		t.Fatalf("lost of its epoch: %v %v, want deleted", gone, err)
	}
	if _, err := e.Store.Stock(ctx, aid); !errors.Is(err, stock.ErrNotWarm) {
		t.Fatalf("stock hash after lost: %v, want ErrNotWarm", err)
	}
}
