package stock_test

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
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

// singles answers items one Reserve each, in order: what a batch of them must answer.
func singles(e *stocktest.Env, aid int64, items []domain.ReserveItem) []stock.ReserveResult {
	out := make([]stock.ReserveResult, len(items))
	for i, it := range items {
		out[i].Reservation, out[i].Err = stocktest.Reserve(ctx, e.Store, aid, it.UID, it.Qty, it.RequestID)
	}
	return out
}

// sameAnswers fails unless batch and single answered every item alike (order numbers aside,
// which are fresh per activity, but one order per request id: replays name the same one).
func sameAnswers(t *testing.T, when string, batch, single []stock.ReserveResult) {
	t.Helper()
	pair, back := map[string]string{}, map[string]string{} // batch order <-> single order
	for i := range batch {
		b, s := batch[i], single[i]
		if xerr.CodeOf(b.Err) != xerr.CodeOf(s.Err) || fmt.Sprint(b.Err) != fmt.Sprint(s.Err) {
			t.Fatalf("%s: item %d: batch error %v, single error %v", when, i, b.Err, s.Err)
		}
		if b.Err != nil {
			continue
		}
		if b.Replay != s.Replay || b.Quantity != s.Quantity || b.Remaining != s.Remaining || b.State != s.State {
			t.Fatalf("%s: item %d: batch %+v, single %+v", when, i, b.Reservation, s.Reservation)
		}
		p, ok1 := pair[b.OrderNo]
		q, ok2 := back[s.OrderNo]
		if ok1 != ok2 || ok1 && (p != s.OrderNo || q != b.OrderNo) {
			t.Fatalf("%s: item %d: batch order %s and single order %s name different orders before", when, i,
				b.OrderNo, s.OrderNo)
		}
		pair[b.OrderNo], back[s.OrderNo] = s.OrderNo, b.OrderNo
	}
}

// A mixed batch answers each item exactly as single reservations in the same order would, on
// a twin activity: replays (also of an item earlier in the batch), the per-user limit, a
// quantity above what remains followed by one that fits, sold out mid-batch, bad input.
func TestReserveBatchAnswersAsSingles(t *testing.T) {
	e := stocktest.New(t)
	spec := stocktest.Spec{Total: 6, Limit: 2}
	batchAid := e.Warm(spec)
	spec.ID = batchAid + 1
	singleAid := e.Warm(spec)
	items := []domain.ReserveItem{
		{UID: 1, Qty: 1, RequestID: reqID(1)}, // reserved: 5 left
		{UID: 1, Qty: 1, RequestID: reqID(1)}, // the duplicate: a replay of item 0
		{UID: 1, Qty: 2, RequestID: reqID(2)}, // 1 held + 2 > limit 2
		{UID: 2, Qty: 2, RequestID: reqID(3)}, // reserved: 3 left
		{UID: 3, Qty: 0, RequestID: reqID(4)}, // bad quantity
		{UID: 3, Qty: 4, RequestID: reqID(5)}, // above the limit
		{UID: 4, Qty: 2, RequestID: reqID(6)}, // reserved: 1 left
		{UID: 5, Qty: 2, RequestID: reqID(7)}, // above what remains
		{UID: 5, Qty: 1, RequestID: reqID(8)}, // fits: 0 left
		{UID: 6, Qty: 1, RequestID: reqID(9)}, // sold out
		{UID: 1, Qty: 1, RequestID: reqID(1)}, // the duplicate again, after the sale ran out
		{UID: 0, Qty: 1, RequestID: reqID(10)},
	}
	got, err := e.Store.ReserveBatch(ctx, batchAid, items, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	want := []error{nil, nil, xerr.ErrLimitExceeded, nil, nil, xerr.ErrLimitExceeded, nil, xerr.ErrSoldOut, nil,
		xerr.ErrSoldOut, nil, nil}
	for i, w := range want {
		if i != 4 && i != 11 && !errors.Is(got[i].Err, w) {
			t.Fatalf("item %d: %+v, want %v", i, got[i], w)
		}
	}
	if xerr.CodeOf(got[4].Err) != xerr.InvalidArgument || xerr.CodeOf(got[11].Err) != xerr.InvalidArgument {
		t.Fatalf("bad items answered %v, %v; want INVALID_ARGUMENT", got[4].Err, got[11].Err)
	}
	if !got[1].Replay || got[1].OrderNo != got[0].OrderNo || got[10].OrderNo != got[0].OrderNo || got[0].Replay {
		t.Fatalf("duplicate in a batch: %+v, %+v, %+v; want one order, the later ones replays", got[0], got[1], got[10])
	}
	if got[8].Remaining != 0 || got[3].Remaining != 3 {
		t.Fatalf("remaining after items 3 and 8: %d, %d; want 3, 0", got[3].Remaining, got[8].Remaining)
	}
	sameAnswers(t, "first", got, singles(e, singleAid, items))
	// Sent again (a client's retry), every reserved item replays its order, and the rest are
	// answered as singles sent again are.
	again, err := e.Store.ReserveBatch(ctx, batchAid, items, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range items {
		if got[i].Err == nil && (!again[i].Replay || again[i].OrderNo != got[i].OrderNo) {
			t.Fatalf("item %d sent again: %+v, want a replay of %s", i, again[i], got[i].OrderNo)
		}
	}
	sameAnswers(t, "again", again, singles(e, singleAid, items))
	if n := e.OutboxCount(batchAid)["reserved"]; n != 4 {
		t.Fatalf("%d reserved entries, want 4 (one per order)", n)
	}
	e.CheckInvariant(batchAid)
	e.CheckInvariant(singleAid)
}

// The window applies to each item after its replay check: before the start nothing sells,
// and after the end a batch still replays what it sold while new items are ENDED.
func TestReserveBatchWindow(t *testing.T) {
	e := stocktest.New(t)
	early := e.Warm(stocktest.Spec{Total: 5, Start: time.Now().Add(time.Hour), End: time.Now().Add(2 * time.Hour)})
	got, err := e.Store.ReserveBatch(ctx, early, []domain.ReserveItem{{UID: 1, Qty: 1, RequestID: reqID(1)},
		{UID: 2, Qty: 1, RequestID: reqID(2)}}, time.Time{})
	if err != nil || xerr.CodeOf(got[0].Err) != xerr.NotStarted || xerr.CodeOf(got[1].Err) != xerr.NotStarted {
		t.Fatalf("before the start: %+v, %v", got, err)
	}
	end := time.Now().Add(1500 * time.Millisecond).Truncate(time.Second).Add(time.Second)
	late := e.Warm(stocktest.Spec{Total: 5, End: end})
	sold, err := stocktest.Reserve(ctx, e.Store, late, 1, 1, reqID(1))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(end) + 50*time.Millisecond)
	got, err = e.Store.ReserveBatch(ctx, late, []domain.ReserveItem{{UID: 2, Qty: 1, RequestID: reqID(2)},
		{UID: 1, Qty: 1, RequestID: reqID(1)}}, time.Time{})
	if err != nil || xerr.CodeOf(got[0].Err) != xerr.Ended || got[1].Err != nil || got[1].OrderNo != sold.OrderNo {
		t.Fatalf("after the end: %+v, %v; want ENDED, then the replay of %s", got, err, sold.OrderNo)
	}
	e.CheckInvariant(early)
}

// Whole-batch failures fail the batch before anything is written: not warm, and past the
// degrade lease (sell-by).
func TestReserveBatchFailsWhole(t *testing.T) {
	e := stocktest.New(t)
	items := []domain.ReserveItem{{UID: 1, Qty: 1, RequestID: reqID(1)}, {UID: 2, Qty: 1, RequestID: reqID(2)}}
	if _, err := e.Store.ReserveBatch(ctx, 987654321, items, time.Time{}); !errors.Is(err, stock.ErrNotWarm) {
		t.Fatalf("cold activity: %v, want not warm", err)
	}
	aid := e.Warm(stocktest.Spec{Total: 5})
	before := e.Dump()
	if _, err := e.Store.ReserveBatch(ctx, aid, items, time.Now().Add(-time.Second)); !errors.Is(err,
		stock.ErrLeaseLapsed) {
		t.Fatalf("past sell-by: %v, want lease lapsed", err)
	}
	if _, err := e.Store.ReserveBatch(ctx, aid, nil, time.Time{}); xerr.CodeOf(err) != xerr.InvalidArgument {
		t.Fatalf("empty batch: %v", err)
	}
	if after := e.Dump(); len(after) != len(before) {
		t.Fatalf("a failed batch wrote: %d keys before, %d after", len(before), len(after))
	}
}

// An item whose order number is taken writes nothing and is answered -12 alone; the next item
// of the same call is reserved (Store retries only the collided items).
func TestReserveBatchTakenOrderNo(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 5})
	r, err := stocktest.Reserve(ctx, e.Store, aid, 1, 1, reqID(1))
	if err != nil {
		t.Fatal(err)
	}
	codes, err := e.Store.ReserveBatchAs(ctx, aid, []domain.ReserveItem{{UID: 2, Qty: 1, RequestID: reqID(2)},
		{UID: 3, Qty: 1, RequestID: reqID(3)}}, []string{r.OrderNo, e.Store.NewOrderNo(aid)})
	if err != nil || codes[0] != -12 || codes[1] != 0 {
		t.Fatalf("batch with a taken number: %v, %v; want [-12 0]", codes, err)
	}
	if res, err := stocktest.Reserve(ctx, e.Store, aid, 2, 1, reqID(2)); err != nil || res.Replay {
		t.Fatalf("the collided item afterwards: %+v, %v; want a new reservation", res, err)
	}
	if c := e.CheckInvariant(aid); c.Locked != 3 {
		t.Fatalf("locked %d, want 3", c.Locked)
	}
}

// The orders hash is read once per call (HMGET) and written once: a number taken before the
// call, or by an earlier item of the same call, is refused (-12) wherever it stands in the
// batch, also last and alone; every order made is in the orders hash (its creation and
// expire-at) and in its batch's member of the pending zset (score: the expire-at), and
// nothing else is.
func TestReserveBatchTakenOrderNoAnywhere(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 10})
	r, err := stocktest.Reserve(ctx, e.Store, aid, 1, 1, reqID(1))
	if err != nil {
		t.Fatal(err)
	}
	a, b := e.Store.NewOrderNo(aid), e.Store.NewOrderNo(aid)
	nos := []string{a, r.OrderNo, a, b, r.OrderNo, b}
	items := make([]domain.ReserveItem, len(nos))
	for i := range items {
		items[i] = domain.ReserveItem{UID: int64(i + 2), Qty: 1, RequestID: reqID(i + 2)}
	}
	codes, err := e.Store.ReserveBatchAs(ctx, aid, items, nos)
	want := []int64{0, -12, -12, 0, -12, -12}
	if err != nil || !slices.Equal(codes, want) {
		t.Fatalf("batch %v: codes %v, %v; want %v", nos, codes, err, want)
	}
	// a batch of one with a taken number
	codes, err = e.Store.ReserveBatchAs(ctx, aid, items[4:5], []string{a})
	if err != nil || !slices.Equal(codes, []int64{-12}) {
		t.Fatalf("a batch of one with a taken number: %v, %v; want [-12]", codes, err)
	}
	sa, sb, sr := stock.ShortNo(a), stock.ShortNo(b), stock.ShortNo(r.OrderNo) // the orders' names in the keys
	all, err := e.Raw.HGetAll(ctx, e.Keys.OrdersHash(aid)).Result()
	if err != nil || len(all) != 3 || all[sa] == "" || all[sb] == "" || all[sr] == "" {
		t.Fatalf("orders hash holds %v (%v); want %s, %s and %s", all, err, r.OrderNo, a, b)
	}
	// one pending member per batch: its orders' short numbers, scored by their expire-at
	zs, err := e.Raw.ZRangeWithScores(ctx, e.Keys.Pending(aid), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, z := range zs {
		got[z.Member.(string)] = z.Score
	}
	if len(got) != 2 || got[sr] == 0 || got[sa+" "+sb] == 0 {
		t.Fatalf("pending holds %v; want the members %q and %q", got, sr, sa+" "+sb)
	}
	for i, no := range []string{a, b} {
		o, err := e.Store.Order(ctx, no)
		if err != nil || float64(o.ExpireAt) != got[sa+" "+sb] || o.UID != items[3*i].UID ||
			o.RequestID != items[3*i].RequestID || o.State != domain.StateReserved || o.Quantity != 1 ||
			o.CreatedAt <= 0 || o.ExpireAt <= o.CreatedAt {
			t.Fatalf("%s: pending scores %v, its order %+v (%v)", no, got[a+" "+b], o, err)
		}
	}
	if c := e.CheckInvariant(aid); c.Locked != 3 {
		t.Fatalf("locked %d, want 3", c.Locked)
	}
}

// Concurrent batches of random buyers (with duplicates and retries) never oversell nor pass a
// buyer's limit, and every reserved quantity is locked.
func TestReserveBatchConcurrentNeverOversells(t *testing.T) {
	e := stocktest.New(t)
	const total, limit, users, senders, batches = 300, 3, 150, 16, 12
	aid := e.Warm(stocktest.Spec{Total: total, Limit: limit})
	var mu sync.Mutex
	orders := map[string]int64{} // order -> qty
	held := map[int64]int64{}
	var reserved atomic.Int64
	race(senders, func(w int) {
		rng := rand.New(rand.NewSource(int64(w)))
		for b := 0; b < batches; b++ {
			items := make([]domain.ReserveItem, 1+rng.Intn(40))
			for i := range items {
				items[i] = domain.ReserveItem{UID: 1 + rng.Int63n(users), Qty: 1 + rng.Int63n(2),
					RequestID: reqID(rng.Intn(6))}
			}
			res, err := e.Store.ReserveBatch(ctx, aid, items, time.Time{})
			if err != nil {
				t.Errorf("batch: %v", err)
				return
			}
			mu.Lock()
			for i, r := range res {
				if r.Err != nil || r.Replay {
					continue
				}
				if _, dup := orders[r.OrderNo]; dup {
					t.Errorf("order %s answered new twice", r.OrderNo)
				}
				orders[r.OrderNo] = r.Quantity
				held[items[i].UID] += r.Quantity
				reserved.Add(r.Quantity)
			}
			mu.Unlock()
		}
	})
	c := e.CheckInvariant(aid)
	if c.Locked != reserved.Load() || c.Remaining < 0 {
		t.Fatalf("counters %+v, reserved %d", c, reserved.Load())
	}
	for uid, h := range held {
		if h > limit {
			t.Fatalf("user %d holds %d > limit %d", uid, h, limit)
		}
		if v, _ := e.Redis.Hget(e.Keys.Buyers(aid), stock.HeldField(uid)); v != domainID(h) {
			t.Fatalf("user %d's hash holds %q, want %d", uid, v, h)
		}
	}
	if n := e.OutboxCount(aid)["reserved"]; n != len(orders) {
		t.Fatalf("%d reserved entries for %d orders", n, len(orders))
	}
}

// WithEntries, a batch's reservations are all in one outbox entry, Awaited once by every item
// that waits on it (a duplicate replays an order made in the same batch, and waits on it too),
// and a change whose entry is still in the outbox hands it over again on its replay.
func TestReserveBatchAwaitsEachEntryOnce(t *testing.T) {
	e := stocktest.New(t, stock.WithEntries())
	aid := e.Warm(stocktest.Spec{Total: 100})
	items := make([]domain.ReserveItem, 0, 34)
	for i := range 32 {
		items = append(items, domain.ReserveItem{UID: int64(i + 1), Qty: 1, RequestID: reqID(i)})
	}
	items = append(items, items[3], domain.ReserveItem{UID: 0, Qty: 1, RequestID: reqID(99)})
	got, err := e.Store.ReserveBatch(ctx, aid, items, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if xerr.CodeOf(got[33].Err) != xerr.InvalidArgument || stock.EntriesOf(got[33]) != nil {
		t.Fatalf("bad item: %+v", got[33])
	}
	es, waiting := stock.Awaited(got)
	if len(es) != 1 || len(waiting[0]) != 33 || waiting[0][32] != 32 || es[0].Seq != 1 {
		t.Fatalf("%d entries awaited (%+v) by %v, want 1, of the batch's one change (seq 1), by items 0..32",
			len(es), es, waiting)
	}
	evs, err := event.FromEntry(es[0].ID, es[0].Values)
	if err != nil || len(evs) != 32 {
		t.Fatalf("the batch's entry holds %d events, %v", len(evs), err)
	}
	for k, ev := range evs { // in the items' order, each of its buyer and order
		if ev.UID != int64(k+1) || ev.OrderNo != got[k].OrderNo || ev.EventID != es[0].ID || ev.Epoch != es[0].Epoch {
			t.Fatalf("event %d: %+v, want uid %d's order %s", k, ev, k+1, got[k].OrderNo)
		}
	}
	// Nobody deleted the entry: the replay hands it over again.
	again, err := e.Store.ReserveBatch(ctx, aid, items[3:4], time.Time{})
	if err != nil || !again[0].Replay || len(stock.EntriesOf(again[0])) != 1 ||
		stock.EntriesOf(again[0])[0].ID != es[0].ID {
		t.Fatalf("replay of an unsent change: %+v, %v", again, err)
	}
	if again[0].State != domain.StateReserved {
		t.Fatalf("replayed state %q", again[0].State)
	}
}
