package stock_test

import (
	"context"
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
		r, err := stocktest.Reserve(ctx, e.Store, aid, int64(i+1), 1, reqID(i))
		switch {
		case err == nil:
			mu.Lock()
			orders[r.OrderNo] = true
			mu.Unlock()
		case xerr.CodeOf(err) == xerr.SoldOut:
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
		r, err := stocktest.Reserve(ctx, e.Store, aid, uid, qty, reqID(i))
		switch {
		case err == nil:
			held[uid].Add(r.Quantity)
			reservedQty.Add(r.Quantity)
			if r.Remaining < 0 {
				t.Errorf("remaining went negative: %d", r.Remaining)
			}
		case xerr.CodeOf(err) == xerr.SoldOut, xerr.CodeOf(err) == xerr.LimitExceeded:
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
		v, _ := e.Redis.Hget(e.Keys.Buyers(aid), stock.HeldField(int64(uid)))
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
		r, err := stocktest.Reserve(ctx, e.Store, aid, 42, 2, "same-request-id")
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
	r, err := stocktest.Reserve(ctx, e.Store, aid, 43, 1, "same-request-id")
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

	if _, err := stocktest.Reserve(ctx, e.Store, live, 1, 2, reqID(1)); err != nil {
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
			_, err := stocktest.Reserve(ctx, e.Store, tc.aid, tc.uid, tc.qty, reqID(100+i))
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
	if xerr.CodeOf(stock.ErrNotWarm) != xerr.Busy {
		t.Fatal("not warm must surface as BUSY")
	}
}

func TestBadInputChangesNothing(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 5, Limit: 5})
	r, err := stocktest.Reserve(ctx, e.Store, aid, 1, 1, reqID(1))
	if err != nil {
		t.Fatal(err)
	}
	long := make([]byte, 65)
	for i := range long {
		long[i] = 'a'
	}
	unknownOrder := fmt.Sprintf("%d-1700000000000deadbeef", aid)
	adjust := func(aid, delta int64) error { _, _, err := e.Store.Adjust(ctx, aid, delta, "", ""); return err }
	reserve := func(aid, uid int64, requestID string) error {
		_, err := stocktest.Reserve(ctx, e.Store, aid, uid, 1, requestID)
		return err
	}
	calls := []struct {
		name string
		call func() error
		want xerr.Code
	}{
		{"zero quantity", func() error { _, err := stocktest.Reserve(ctx, e.Store, aid, 2, 0, reqID(2)); return err },
			xerr.InvalidArgument},
		{"negative quantity", func() error { _, err := stocktest.Reserve(ctx, e.Store, aid, 2, -1, reqID(2)); return err },
			xerr.InvalidArgument},
		{"huge quantity", func() error { _, err := stocktest.Reserve(ctx, e.Store, aid, 2, 1<<62, reqID(2)); return err },
			xerr.InvalidArgument},
		{"empty request id", func() error { return reserve(aid, 2, "") },
			xerr.InvalidArgument},
		{"short request id", func() error { return reserve(aid, 2, "abc") },
			xerr.InvalidArgument},
		{"oversized request id", func() error { return reserve(aid, 2, string(long)) },
			xerr.InvalidArgument},
		{"request id with bad chars", func() error { return reserve(aid, 2, "abc def ghi") },
			xerr.InvalidArgument},
		{"zero uid", func() error { return reserve(aid, 0, reqID(2)) }, xerr.InvalidArgument},
		{"zero activity", func() error { return reserve(0, 2, reqID(2)) },
			xerr.InvalidArgument},
		{"confirm malformed order", func() error { _, err := e.Store.Confirm(ctx, "nope", 1); return err },
			xerr.InvalidArgument},
		{"confirm unknown order", func() error { _, err := e.Store.Confirm(ctx, unknownOrder, 1); return err },
			xerr.OrderNotFound},
		{"confirm another user's order", func() error { _, err := e.Store.Confirm(ctx, r.OrderNo, 2); return err },
			xerr.OrderNotFound},
		{"cancel another user's order", func() error {
			_, err := e.Store.Release(ctx, r.OrderNo, 2, domain.StateCancelled)
			return err
		}, xerr.OrderNotFound},
		{"release to a bad state", func() error { _, err := e.Store.Release(ctx, r.OrderNo, 1, "paid"); return err },
			xerr.InvalidArgument},
		{"expire before due", func() error { _, err := e.Store.Expire(ctx, r.OrderNo); return err }, xerr.NotDue},
		{"adjust by zero", func() error { return adjust(aid, 0) }, xerr.InvalidArgument},
		{"adjust by huge", func() error { return adjust(aid, 1<<40) }, xerr.InvalidArgument},
		{"withdraw more than remaining", func() error { return adjust(aid, -5) }, xerr.InsufficientStock},
		{"expire batch too large", func() error { _, err := e.Store.ExpireDue(ctx, aid, 5000); return err },
			xerr.InvalidArgument},
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

func TestParseOrderNo(t *testing.T) {
	no := domain.NewOrderNo(123)
	if aid, ok := domain.ParseOrderNo(no); !ok || aid != 123 {
		t.Fatalf("%s -> %d %v", no, aid, ok)
	}
	for _, bad := range []string{"", "123", "-abc", "0-12345678", "12-xyz12345",
		"1-123456789012345678901234567890123456789012345678901234567890123"} {
		if _, ok := domain.ParseOrderNo(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// reserveBy is a ReserveBatch of one item with a sell-by.
func reserveBy(e *stocktest.Env, aid, uid int64, requestID string, sellBy time.Time) (domain.Reservation, error) {
	res, err := e.Store.ReserveBatch(ctx, aid, []domain.ReserveItem{{UID: uid, Qty: 1, RequestID: requestID}}, sellBy)
	if err != nil {
		return domain.Reservation{}, err
	}
	return res[0].Reservation, res[0].Err
}

// A reservation with a sell-by sells nothing once Redis's clock is past its sell-by (degrade mode's lease):
// ErrLeaseLapsed (BUSY without a cause: not Redis down), nothing written; before it, and
// with no sell-by, it sells; a replay of a request id that already sold answers the order
// whatever the sell-by (nothing is sold again).
func TestReserveBySellBy(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 10, Limit: 5})
	first, err := reserveBy(e, aid, 1, "sell-by-0001", time.Now().Add(time.Minute))
	if err != nil || first.Replay {
		t.Fatalf("inside the lease: %+v %v", first, err)
	}
	before := e.Dump()
	_, err = reserveBy(e, aid, 2, "sell-by-0002", time.Now().Add(-time.Second))
	var xe *xerr.Error
	if !errors.Is(err, stock.ErrLeaseLapsed) || !errors.As(err, &xe) || xe.Code != xerr.Busy || xe.Cause != nil {
		t.Fatalf("past the lease: %v, want ErrLeaseLapsed", err)
	}
	if after := e.Dump(); len(after) != len(before) {
		t.Fatalf("a lapsed reservation wrote: %d keys -> %d", len(before), len(after))
	}
	if r, err := reserveBy(e, aid, 1, "sell-by-0001", time.Now().Add(-time.Second)); err != nil ||
		!r.Replay || r.OrderNo != first.OrderNo {
		t.Fatalf("replay past the lease: %+v %v, want the first order", r, err)
	}
	if _, err := reserveBy(e, aid, 3, "sell-by-0003", time.Time{}); err != nil {
		t.Fatalf("no sell-by: %v", err)
	}
	if c := e.CheckInvariant(aid); c.Remaining != 8 || c.Locked != 2 {
		t.Fatalf("counters %+v, want two reservations", c)
	}
}

// warmUnchecked warms a live activity whose stock hash the test deletes (Env.Warm checks
// the invariant on it at the end).
func warmUnchecked(t *testing.T, e *stocktest.Env, total int64) int64 {
	t.Helper()
	aid := time.Now().UnixNano()%1_000_000_000 + 1
	now := time.Now()
	created, _, err := e.Store.Warmup(ctx, domain.Activity{ActivityID: aid, SkuID: 7, Name: "test",
		Counters: domain.Counters{Total: total, Remaining: total}, Start: now.Add(-time.Minute).Unix(),
		End: now.Add(time.Hour).Unix(), Limit: 1,
		PayTimeout: 900, ExpireAt: now.Add(2 * time.Hour).Unix()})
	if err != nil || !created {
		t.Fatalf("warm %d: %v %v", aid, created, err)
	}
	return aid
}

// mustOrderNo is the one order number of activity aid.
func mustOrderNo(t *testing.T, e *stocktest.Env, aid int64) string {
	t.Helper()
	nos, err := stocktest.OrderNos(ctx, e.Store, aid)
	if err != nil || len(nos) != 1 {
		t.Fatalf("orders of %d: %v %v", aid, nos, err)
	}
	return nos[0]
}

// Lost deletes the stock hash only while it is of the epoch given.

// TestNoReplayWhileNotWarm: once the stock hash is gone (the Acker deleted a rolled-back
// book's for a rebuild) a retried reservation, pay or cancel is answered not warm, not
// replayed ("already paid", "already cancelled") from the orders Redis still holds: the
// rebuild wipes them, and its new epoch drops the event of a change made before it that the
// writer had not applied, so an answer given meanwhile (the entry relayed, nothing left for
// the Acker) acknowledged a change MySQL never got.
func TestNoReplayWhileNotWarm(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 10, Limit: 5})
	var nos []string
	for i := range 3 {
		r, err := stocktest.Reserve(ctx, e.Store, aid, 42, 1, reqID(i))
		if err != nil {
			t.Fatal(err)
		}
		nos = append(nos, r.OrderNo)
	}
	if _, err := e.Store.Confirm(ctx, nos[1], 42); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.Release(ctx, nos[2], 42, domain.StateCancelled); err != nil {
		t.Fatal(err)
	}
	hash, err := e.Raw.Dump(ctx, e.Keys.Stock(aid)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Raw.Del(ctx, e.Keys.Stock(aid)).Err(); err != nil {
		t.Fatal(err)
	}
	r, err := stocktest.Reserve(ctx, e.Store, aid, 42, 1, reqID(0))
	if !errors.Is(err, stock.ErrNotWarm) {
		t.Errorf("the reservation's retry with the stock hash gone: %+v %v, want not warm", r, err)
	}
	if _, err := e.Store.Confirm(ctx, nos[1], 42); !errors.Is(err, stock.ErrNotWarm) {
		t.Errorf("the pay's retry with the stock hash gone: %v, want not warm", err)
	}
	if _, err := e.Store.Release(ctx, nos[2], 42, domain.StateCancelled); !errors.Is(err, stock.ErrNotWarm) {
		t.Errorf("the cancel's retry with the stock hash gone: %v, want not warm", err)
	}
	if err := e.Raw.RestoreReplace(ctx, e.Keys.Stock(aid), 0, hash).Err(); err != nil { // for the cleanup's check
		t.Fatal(err)
	}
}
