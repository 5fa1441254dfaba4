package stock_test

import (
	"errors"
	"fmt"
	"math/rand"
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

func TestOrderTransitions(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 100, Limit: 100, PayTimeout: 1})
	reserve := func(t *testing.T, uid int64) string {
		t.Helper()
		r, err := stocktest.Reserve(ctx, e.Store, aid, uid, 2, fmt.Sprintf("req-%d-%d", uid, time.Now().UnixNano()))
		if err != nil {
			t.Fatal(err)
		}
		return r.OrderNo
	}
	pay := func(no string) error { _, err := e.Store.Confirm(ctx, no, 1); return err }
	cancel := func(no string) error { _, err := e.Store.Release(ctx, no, 1, domain.StateCancelled); return err }
	expire := func(no string) error { _, err := e.Store.Expire(ctx, no); return err }
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
		{"cancel twice", []func(string) error{cancel, cancel}, -1, []error{nil, nil}, domain.StateCancelled,
			[]event.Type{event.Cancelled}},
		{"pay after cancel", []func(string) error{cancel, pay}, -1, []error{nil, xerr.ErrOrderClosed}, domain.StateCancelled,
			[]event.Type{event.Cancelled}},
		{"cancel after pay", []func(string) error{pay, cancel}, -1, []error{nil, xerr.ErrOrderPaid}, domain.StatePaid,
			[]event.Type{event.Paid}},
		{"expire before due", []func(string) error{expire}, -1, []error{xerr.ErrNotDue}, domain.StateReserved, nil},
		{"expire after paid", []func(string) error{pay, expire}, 1, []error{nil, xerr.ErrOrderPaid}, domain.StatePaid,
			[]event.Type{event.Paid}},
		{"expire when due, twice", []func(string) error{expire, expire}, 0, []error{nil, nil}, domain.StateExpired,
			[]event.Type{event.Expired}},
		{"pay after due", []func(string) error{pay}, 0, []error{xerr.ErrOrderClosed}, domain.StateReserved, nil},
		{"pay after expired", []func(string) error{expire, pay}, 0, []error{nil, xerr.ErrOrderClosed}, domain.StateExpired,
			[]event.Type{event.Expired}},
		{"cancel after expired", []func(string) error{expire, cancel}, 0, []error{nil, xerr.ErrOrderClosed},
			domain.StateExpired, []event.Type{event.Expired}},
		{"expire after cancel", []func(string) error{cancel, expire}, 1, []error{nil, xerr.ErrOrderClosed},
			domain.StateCancelled, []event.Type{event.Cancelled}},
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
	r, err := stocktest.Reserve(ctx, e.Store, aid, 9, 2, reqID(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stocktest.Reserve(ctx, e.Store, aid, 9, 1, reqID(2)); xerr.CodeOf(err) != xerr.LimitExceeded {
		t.Fatalf("want limit exceeded, got %v", err)
	}
	if _, err := e.Store.Release(ctx, r.OrderNo, 9, domain.StateCancelled); err != nil {
		t.Fatal(err)
	}
	if _, err := stocktest.Reserve(ctx, e.Store, aid, 9, 2, reqID(3)); err != nil {
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
		r, err := stocktest.Reserve(ctx, e.Store, aid, int64(i+1), 1, reqID(i))
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
			switch _, err := e.Store.Confirm(ctx, no, uid); {
			case err == nil:
				paid.Add(1)
			case xerr.CodeOf(err) == xerr.OrderClosed:
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
		if _, err := stocktest.Reserve(ctx, e.Store, aid, int64(i+1), 1, reqID(i)); err != nil {
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
	c, _, err := e.Store.Adjust(ctx, aid, 5, "", "")
	if err != nil || c.Total != 15 || c.Remaining != 15 {
		t.Fatalf("add: %+v %v", c, err)
	}
	c, _, err = e.Store.Adjust(ctx, aid, -15, "", "")
	if err != nil || c.Total != 0 || c.Remaining != 0 {
		t.Fatalf("withdraw all: %+v %v", c, err)
	}
	if _, _, err := e.Store.Adjust(ctx, aid, -1, "", ""); xerr.CodeOf(err) != xerr.InsufficientStock {
		t.Fatalf("withdraw below zero: %v", err)
	}
	if _, _, err := e.Store.Adjust(ctx, aid+1, 1, "", ""); !errors.Is(err, stock.ErrNotWarm) {
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
	if _, err := stocktest.Reserve(ctx, e.Store, aid, 1, 1, reqID(1)); err != nil {
		t.Fatal(err)
	}
	created, remaining, err := e.Store.Warmup(ctx, domain.Activity{ActivityID: aid,
		Counters: domain.Counters{Total: 50, Remaining: 50}, Start: time.Now().Unix() - 10, End: end.Unix(), Limit: 1,
		PayTimeout: 10, ExpireAt: end.Unix() + 1})
	if err != nil || created || remaining != 9 {
		t.Fatalf("second warm-up: created=%v remaining=%d err=%v; want live stock 9 untouched", created, remaining, err)
	}
	// Keys expire at the ExpireAt warm-up was given (end + 1 h by stocktest.Warm).
	ttl, err := e.Redis.Ttl(e.Keys.Stock(aid))
	if err != nil || ttl <= 3000 || ttl > 3602 {
		t.Fatalf("stock ttl %d (%v), want about an hour past the end", ttl, err)
	}
	for _, k := range []string{e.Keys.Pending(aid), e.Keys.OrdersHash(aid), e.Keys.Buyers(aid)} {
		if ttl, _ := e.Redis.Ttl(k); ttl <= 0 {
			t.Fatalf("%s has no expiry (%d)", k, ttl)
		}
	}
	e.CheckInvariant(aid)

	// A real expiry, short.
	short := aid + 1
	if _, _, err := e.Store.Warmup(ctx, domain.Activity{ActivityID: short,
		Counters: domain.Counters{Total: 1, Remaining: 1},
		Start:    time.Now().Unix() - 10, End: time.Now().Unix() + 1, Limit: 1, PayTimeout: 10,
		ExpireAt: time.Now().Unix() + 1}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond)
	if _, err := e.Store.Stock(ctx, short); !errors.Is(err, stock.ErrNotWarm) {
		t.Fatalf("stock did not expire: %v", err)
	}
}
