package stock_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
)

// A reservation in the draw's window is an entry: queued, with the entry's request id and
// draw_at, no stock moved, one entered event; the buyer's further reservations with any
// request id answer that entry and add nothing; a quantity above the limit is LIMIT_EXCEEDED.
func TestEntryRules(t *testing.T) {
	e := stocktest.New(t)
	drawAt := time.Now().Add(time.Hour)
	aid := e.Warm(stocktest.Spec{Total: 5, Limit: 2, DrawAt: drawAt})
	r, err := stocktest.Reserve(ctx, e.Store, aid, 1, 2, reqID(1))
	if err != nil || r.State != domain.StateQueued || r.RequestID != reqID(1) || r.Quantity != 2 ||
		r.DrawAt != drawAt.UnixMilli() || r.OrderNo != "" {
		t.Fatalf("entry: %+v, %v; want queued %s qty 2 draw_at %d", r, err, reqID(1), drawAt.UnixMilli())
	}
	again, err := stocktest.Reserve(ctx, e.Store, aid, 1, 1, reqID(2))
	if err != nil || again.State != domain.StateQueued || again.RequestID != reqID(1) || again.Quantity != 2 {
		t.Fatalf("a further reservation of an entrant: %+v, %v; want the first entry", again, err)
	}
	if _, err := stocktest.Reserve(ctx, e.Store, aid, 2, 3, reqID(3)); xerr.CodeOf(err) != xerr.LimitExceeded {
		t.Fatalf("quantity above the limit: %v, want LIMIT_EXCEEDED", err)
	}
	if p, _ := e.Store.Draw(ctx, aid); p.Entries != 1 {
		t.Fatalf("entries %d, want 1", p.Entries)
	}
	if c := e.CheckInvariant(aid); c.Remaining != 5 {
		t.Fatalf("an entry moved stock: %+v", c)
	}
	if got := e.OutboxCount(aid); got[event.Entered] != 1 || len(got) != 1 {
		t.Fatalf("outbox %v, want one entered event", got)
	}
	ev := e.Outbox(aid)[0]
	if ev.UID != 1 || ev.Quantity != 2 || ev.RequestID != reqID(1) {
		t.Fatalf("entered event %+v", ev)
	}
	en, st, _, err := e.Store.DrawEntry(ctx, aid, 1)
	if err != nil || st != domain.StateQueued || en.RequestID != reqID(1) {
		t.Fatalf("entry %+v, status %q, %v", en, st, err)
	}
	if _, _, _, err := e.Store.DrawEntry(ctx, aid, 9); xerr.CodeOf(err) != xerr.EntryNotFound {
		t.Fatalf("no entry: %v, want ENTRY_NOT_FOUND", err)
	}
}

// Entries are not bounded by stock, and many buyers entering at once each get one entry
// (a batch of entries in one script call, as the coalescer sends them).
func TestEntriesConcurrentBatches(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 3, Limit: 1, DrawAt: time.Now().Add(time.Hour)})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			items := make([]domain.ReserveItem, 0, 50)
			for i := range 50 { // every goroutine sends every buyer: each buyer enters once
				items = append(items, domain.ReserveItem{UID: int64(i + 1), Qty: 1, RequestID: reqID(g*100 + i)})
			}
			res, err := e.Store.ReserveBatch(ctx, aid, items, time.Time{})
			if err != nil {
				t.Error(err)
				return
			}
			for _, r := range res {
				if r.Err != nil || r.State != domain.StateQueued {
					t.Errorf("item: %+v", r)
				}
			}
		}()
	}
	wg.Wait()
	entries, err := e.Store.DrawEntries(ctx, aid)
	if err != nil || len(entries) != 50 {
		t.Fatalf("entries %d, %v; want 50", len(entries), err)
	}
	if got := e.OutboxCount(aid)[event.Entered]; got != 50 {
		t.Fatalf("entered events %d, want 50", got)
	}
	if c := e.CheckInvariant(aid); c.Remaining != 3 {
		t.Fatalf("entries moved stock: %+v", c)
	}
}

// Once draw_at has passed but the draw is not done, an entrant is still queued and anyone
// else is BUSY: nothing is sold ahead of the draw.
func TestDrawPendingSellsNothing(t *testing.T) {
	e := stocktest.New(t)
	drawAt := time.Now().Add(700 * time.Millisecond)
	aid := e.Warm(stocktest.Spec{Total: 3, Limit: 1, DrawAt: drawAt})
	if _, err := stocktest.Reserve(ctx, e.Store, aid, 1, 1, reqID(1)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(drawAt) + 50*time.Millisecond)
	if r, err := stocktest.Reserve(ctx, e.Store, aid, 1, 1, reqID(1)); err != nil || r.State != domain.StateQueued {
		t.Fatalf("entrant after draw_at: %+v, %v; want queued", r, err)
	}
	if _, err := stocktest.Reserve(ctx, e.Store, aid, 2, 1, reqID(2)); !errors.Is(err, stock.ErrDrawBusy) {
		t.Fatalf("non-entrant before the draw is done: %v, want BUSY", err)
	}
	if c := e.CheckInvariant(aid); c.Remaining != 3 {
		t.Fatalf("sold before the draw: %+v", c)
	}
}

// enter.lua reads each argument by its name: past the sell-by nothing is entered; each item's
// uid, quantity and request id land in its entry (the third item's too: the groups' width), the
// activity id and the traceparent in its event; the per-address bound and each item's address
// refuse a second entrant from one address and admit one from another; each answer carries its
// outbox entry (want_entries).
func TestEnterArgsByName(t *testing.T) {
	e := stocktest.New(t, stock.WithEntries(), stock.WithDrawEntriesPerAddress(1))
	aid := e.Warm(stocktest.Spec{Total: 10, Limit: 5, DrawAt: time.Now().Add(time.Hour)})
	traced := tracedCtx(7)
	items := []domain.ReserveItem{{UID: 11, Qty: 2, RequestID: reqID(1), Addr: "10.0.0.1"},
		{UID: 12, Qty: 3, RequestID: reqID(2), Addr: "10.0.0.1"},
		{UID: 13, Qty: 4, RequestID: reqID(3), Addr: "10.0.0.2"}}
	if _, err := e.Store.EnterAs(traced, aid, items, time.Now().Add(-time.Second)); !errors.Is(err,
		stock.ErrLeaseLapsed) {
		t.Fatalf("past the sell-by: %v, want ErrLeaseLapsed", err)
	}
	res, err := e.Store.EnterAs(traced, aid, items, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if xerr.CodeOf(res[1].Err) != xerr.RateLimited {
		t.Fatalf("a second entrant from one address: %v", res[1].Err)
	}
	for _, i := range []int{0, 2} {
		r, it := res[i], items[i]
		if r.Err != nil || r.State != domain.StateQueued || r.Quantity != it.Qty || r.RequestID != it.RequestID ||
			len(stock.EntriesOf(r)) != 1 {
			t.Fatalf("item %d: %+v", i, r)
		}
		got, _, _, err := e.Store.DrawEntry(ctx, aid, it.UID)
		if err != nil || got.Qty != it.Qty || got.RequestID != it.RequestID || got.EventID != stock.EntriesOf(r)[0].ID {
			t.Fatalf("item %d's entry: %+v, %v", i, got, err)
		}
		a, err := event.Attributes(stock.EntriesOf(r)[0].Values)
		if err != nil || a[event.FieldTraceParent] != event.TraceParent(traced) {
			t.Fatalf("item %d's event: %v, %v", i, a, err)
		}
	}
	evs := e.Outbox(aid)
	if len(evs) != 2 || evs[0].ActivityID != aid || evs[1].UID != 13 || evs[1].Quantity != 4 {
		t.Fatalf("entered events %+v", evs)
	}
}
