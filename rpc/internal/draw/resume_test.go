package draw_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/internal/draw"
)

// Redis loses the draw mid-way (its cursor, the losers' values and the lease; the rebuild keeps
// the stock hash, the winners' orders and the entries) after stock came back: the next run
// resumes at MySQL's cursor, so no entrant the draw already passed over wins the returned
// stock, and the draw's counts stay whole.
func TestRedisLossMidDrawKeepsTheCursor(t *testing.T) {
	f := newFixture(t)
	const n, total = 120, 30
	seed := seedOf(4242)
	aid := f.activity(t, total, n, seed, 800*time.Millisecond)
	d := &draw.Drawer{Store: f.e.Store, Seeds: f.acts, Chunk: 8}
	r, err := d.Begin(ctx, aid)
	if err != nil || r == nil {
		t.Fatalf("begin: %v, %v", r, err)
	}
	var p stock.DrawProgress
	for lost(t, f.e, aid) == 0 { // up to the chunk that sells out: its tail lost, the draw not done
		if done, err := r.Step(ctx); done || err != nil {
			t.Fatalf("step: done %v, %v", done, err)
		}
		p, _ = f.e.Store.Draw(ctx, aid)
	}
	entries, _ := f.e.Store.DrawEntries(ctx, aid)
	order := draw.Order(entries, seed)
	won := f.outcome(t, aid)
	var passed []domain.DrawEntry // entrants before the cursor left without stock
	for _, e := range order[:p.Cursor] {
		if _, ok := won[e.UID]; !ok {
			passed = append(passed, e)
		}
	}
	if len(passed) == 0 {
		t.Fatalf("no loser before the cursor %d: the test proves nothing", p.Cursor)
	}
	// A winner of 2 units cancels: stock any passed-over entrant's quantity fits.
	var back int64
	for uid, no := range won {
		if o, _ := f.e.Store.Order(ctx, no); o.Quantity == 2 {
			if _, err := f.e.Store.Release(ctx, no, uid, domain.StateCancelled); err != nil {
				t.Fatal(err)
			}
			back = uid
			break
		}
	}
	if back == 0 {
		t.Fatal("no winner of 2 units")
	}
	// The loss: what a rebuild does not bring back of a draw not done.
	keys := []string{f.e.Keys.Draw(aid), drawLease(f.e.Keys, aid)}
	for _, k := range keys {
		if _, err := f.e.Redis.DelCtx(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range passed {
		if _, err := f.e.Redis.HdelCtx(ctx, f.e.Keys.Buyers(aid), stock.ReqField(e.UID, e.RequestID)); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Run(ctx, aid); err != nil {
		t.Fatal(err)
	}
	after := f.outcome(t, aid)
	for _, e := range passed {
		if no, ok := after[e.UID]; ok {
			t.Fatalf("entrant %d, passed over before the cursor %d (MySQL's), won %s after the loss", e.UID,
				p.Cursor, no)
		}
		if _, err := stocktest.Reserve(ctx, f.e.Store, aid, e.UID, e.Qty, e.RequestID); xerr.CodeOf(err) != xerr.SoldOut {
			t.Fatalf("entrant %d's replay after the draw: %v, want SOLD_OUT", e.UID, err)
		}
	}
	end, _ := f.e.Store.Draw(ctx, aid)
	if end.Status != domain.DrawDone || end.Winners+lost(t, f.e, aid) != n || end.Winners != int64(len(after)) {
		t.Fatalf("draw %+v: want done, %d winners of %d", end, len(after), n)
	}
	if got, err := f.acts.FindDrawCursor(ctx, aid); err != nil || got != n {
		t.Fatalf("MySQL's cursor %d, %v; want %d", got, err, n)
	}
	f.e.CheckInvariant(aid)
}

// A winner replaying its entry while the draw runs is still queued (API.md: 202 until the draw
// is done), though its order exists: a winner who learnt it early could cancel into the draw.
func TestWinnerReplayQueuedMidDraw(t *testing.T) {
	f := newFixture(t)
	aid := f.activity(t, 10, 40, seedOf(3), 800*time.Millisecond)
	d := &draw.Drawer{Store: f.e.Store, Seeds: f.acts, Chunk: 4}
	r, err := d.Begin(ctx, aid)
	if err != nil || r == nil {
		t.Fatalf("begin: %v, %v", r, err)
	}
	defer r.Finish()
	if done, err := r.Step(ctx); done || err != nil {
		t.Fatalf("step: done %v, %v", done, err)
	}
	won := f.outcome(t, aid)
	if len(won) == 0 {
		t.Fatal("no winner in the first chunk")
	}
	for uid := range won {
		res, err := stocktest.Reserve(ctx, f.e.Store, aid, uid, 1+uid%2, reqID(uid))
		if err != nil || res.State != domain.StateQueued || res.OrderNo != "" || res.RequestID != reqID(uid) {
			t.Fatalf("winner %d's replay mid-draw: %+v, %v; want its entry, queued", uid, res, err)
		}
	}
	for done := false; !done; {
		if done, err = r.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for uid, no := range won {
		if res, err := stocktest.Reserve(ctx, f.e.Store, aid, uid, 1+uid%2, reqID(uid)); err != nil || res.OrderNo != no {
			t.Fatalf("winner %d's replay after the draw: %+v, %v; want order %s", uid, res, err, no)
		}
	}
}

// The drawer's lease keeps the key an earlier version's instances take (a rolling upgrade
// shares it): sk:{a<ID>}:drawlock.
func TestLockKeepsItsKeyName(t *testing.T) {
	e := stocktest.New(t)
	held, err := e.Store.Lock(7, draw.LockName).AcquireCtx(ctx)
	if n, _ := e.Redis.Exists(drawLease(e.Keys, 7)); !held || err != nil || !n {
		t.Errorf("the draw lease (%v, %v) is not at sk:{a7}:drawlock", held, err)
	}
}

// drawLease is the key of activity aid's draw lease (Store.Lock(aid, draw.LockName)), as the
// pin above spells it.
func drawLease(k stock.Keys, aid int64) string {
	return fmt.Sprintf("%ssk:{a%d}:drawlock", k.Prefix, aid)
}
