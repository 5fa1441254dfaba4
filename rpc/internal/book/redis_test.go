package book_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/book"
	"github.com/seckill/seckill/rpc/internal/degrade"
)

// acker is a book.Acker that records each call's entries, checks that each is in the outbox
// already (the script ran first) and refuses the entries of uid refuse.
type acker struct {
	t      *testing.T
	e      *stocktest.Env
	mu     sync.Mutex
	calls  [][]stock.Entry
	refuse string
}

func (a *acker) AckBatch(_ context.Context, es []stock.Entry) []error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, es)
	errs := make([]error, len(es))
	for i, en := range es {
		if n, err := a.e.Raw.XRange(ctx, a.e.Keys.Events(en.ActivityID), en.ID, en.ID).Result(); err != nil ||
			len(n) != 1 {
			a.t.Errorf("entry %s handed to the acker before it is in the outbox (%v)", en.ID, err)
		}
		if slices.Contains(uids(en), a.refuse) {
			errs[i] = xerr.New(xerr.Busy, "refused")
		}
	}
	return errs
}

// take returns the calls so far and forgets them.
func (a *acker) take(refuse string) [][]stock.Entry {
	a.mu.Lock()
	defer a.mu.Unlock()
	calls := a.calls
	a.calls, a.refuse = nil, refuse
	return calls
}

// The Redis book runs a change's script, then hands the acker the entries its answer waits on,
// a call's at once and each once (a batch's reservations are one entry); an item whose entry the
// acker refuses is BUSY, its change staying made, and its retry hands the same entry over again.
// Pay, cancel and adjust likewise.
func TestRedisBookAcknowledgesAfterTheScript(t *testing.T) {
	e := stocktest.New(t, stock.WithEntries())
	aid := e.Warm(stocktest.Spec{Total: 100, Limit: 2})
	a := &acker{t: t, e: e, refuse: "40"}
	b := book.Redis{Store: e.Store, Acker: a}
	items := make([]domain.ReserveItem, 0, 33)
	for i := range 32 {
		items = append(items, domain.ReserveItem{UID: int64(i + 1), Qty: 1, RequestID: rid(i)})
	}
	items = append(items, items[3]) // a duplicate in the batch: the replay of item 3's order
	got, err := b.ReserveBatch(ctx, aid, items)
	if err != nil {
		t.Fatal(err)
	}
	if calls := a.take("40"); len(calls) != 1 || len(calls[0]) != 1 || len(uids(calls[0][0])) != 32 {
		t.Fatalf("acker calls %d (%v), want one of the batch's entry of 32 events", len(calls), calls)
	}
	for i, r := range got {
		if r.Err != nil || r.Replay != (i == 32) {
			t.Fatalf("item %d: %+v", i, r)
		}
	}
	if _, err := b.Reserve(ctx, aid, 40, 1, rid(40)); xerr.CodeOf(err) != xerr.Busy {
		t.Fatalf("a reservation whose entry the acker refuses: %v, want BUSY", err)
	}
	refused := a.take("")
	r, err := b.Reserve(ctx, aid, 40, 1, rid(40))
	if calls := a.take(""); err != nil || !r.Replay || r.State != domain.StateReserved || len(calls) != 1 ||
		len(calls[0]) != 1 || calls[0][0].ID != refused[0][0].ID {
		t.Fatalf("retry of the refused item: %+v, %v, acker calls %v", r, err, calls)
	}
	changes := []struct {
		name   string
		refuse string // the uid of its entry ("": an adjustment's)
		call   func() error
		replay bool // its retry replays it (the same entry); an adjustment without a key is made again
	}{
		{"pay", "1", func() error { return b.Confirm(ctx, got[0].OrderNo, 1) }, true},
		{"cancel", "2", func() error { return b.Release(ctx, got[1].OrderNo, 2, domain.StateCancelled) }, true},
		{"adjust", "", func() error { _, err := b.Adjust(ctx, aid, 5, "", ""); return err }, false},
	}
	for _, c := range changes {
		a.take(c.refuse)
		if err := c.call(); xerr.CodeOf(err) != xerr.Busy {
			t.Fatalf("%s refused by the acker: %v, want BUSY", c.name, err)
		}
		first := a.take("none")
		if err := c.call(); err != nil {
			t.Fatalf("%s retried: %v", c.name, err)
		}
		again := a.take("")
		// This acker deletes nothing: a retried order change hands over every entry of the order.
		if len(first) != 1 || len(again) != 1 || c.replay != slices.ContainsFunc(again[0],
			func(en stock.Entry) bool { return en.ID == first[0][0].ID }) {
			t.Fatalf("%s: acker calls %v, then %v on the retry", c.name, first, again)
		}
	}
	e.CheckInvariant(aid)
}

// uids are the uids of an outbox entry's events.
func uids(en stock.Entry) []string {
	as, _ := event.EntryAttributes(en.Values)
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a[event.FieldUID]
	}
	return out
}

// The fence comes after the acker: a change acknowledged while degrade mode took its activity
// over is BUSY (the MySQL book may sell without it), though Kafka has it.
func TestRedisBookAsksTheFenceAfterTheAcker(t *testing.T) {
	db := testenv.MySQL(t)
	e := stocktest.New(t, stock.WithEntries())
	res, err := db.DB.Exec("INSERT INTO activity (sku_id, name, total, start_time, end_time, per_user_limit) " +
		"VALUES (7, 'kettle', 5, 0, 4000000000, 5)")
	if err != nil {
		t.Fatal(err)
	}
	aid, _ := res.LastInsertId()
	if _, err := db.DB.Exec("INSERT INTO inventory (activity_id, available, mode) VALUES (?, 5, 'redis')",
		aid); err != nil {
		t.Fatal(err)
	}
	e.Warm(stocktest.Spec{ID: aid, Total: 5, Limit: 5})
	conn := book.Conn(db.DSN)
	fence := &degrade.Fence{On: true, Conf: degrade.Conf{Concurrency: 4, LeaseMs: 50},
		Inventory: model.NewInventoryModel(conn), Store: e.Store}
	t.Cleanup(fence.Stop)
	a := &acker{t: t, e: e}
	b := book.Redis{Store: e.Store, Acker: a, Fence: fence}
	if _, err := b.Reserve(ctx, aid, 1, 1, rid(1)); err != nil {
		t.Fatalf("reserve while Redis sells: %v", err)
	}
	if _, err := db.DB.Exec("UPDATE inventory SET mode = 'mysql' WHERE activity_id = ?", aid); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond) // the fence's view is older than its lease: read again
	for n := 2; n < 4; n++ {
		_, err := b.Reserve(ctx, aid, int64(n), 1, rid(n))
		if xerr.CodeOf(err) != xerr.Busy {
			t.Fatalf("reserve %d acknowledged after the switch to MySQL: %v, want BUSY", n, err)
		}
		time.Sleep(120 * time.Millisecond) // past 2 leases: the MySQL book sells
	}
	if calls := a.take(""); len(calls) != 3 {
		t.Fatalf("%d acker calls, want 3 (each change's entry went to Kafka before the fence)", len(calls))
	}
	if got := e.Outbox(aid); len(got) != 3 {
		t.Fatalf("outbox holds %v, want the three changes (made, then refused an answer)", got)
	}
}
