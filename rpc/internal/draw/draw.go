// Package draw decides an activity's opening draw once: at draw_at one instance, holding a
// lease, orders the entrants by the activity's seed (fixed in MySQL when it was created) and
// serves them in that order in chunks of ordinary reservations, a cursor recording progress
// (docs/DESIGN.md, "The opening draw"). The seed is never logged, nor shown before the draw is
// done.
package draw

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
)

// Seeds is where the draw's seed is kept and its progress recorded (model.ActivityModel).
type Seeds interface {
	FindDrawSeed(ctx context.Context, id int64) ([]byte, error)
	// FixDrawStock records the stock the draw serves, once (the audit's stock).
	FixDrawStock(ctx context.Context, id, stock int64) (int64, error)
	SetDrawDone(ctx context.Context, id, atMs int64) error
	// FindDrawCursor and SetDrawCursor: how many entrants of the order are decided, in
	// MySQL, so a Redis loss mid-draw does not serve them again.
	FindDrawCursor(ctx context.Context, id int64) (int64, error)
	SetDrawCursor(ctx context.Context, id, cursor int64) error
}

// Drawer draws activities.
type Drawer struct {
	Store *stock.Store
	// Server reserves the entrants (book.Redis: the script, then the acknowledgement); nil:
	// Store's script alone, answered once Redis holds it.
	Server Server
	Seeds  Seeds
	// Lease is the draw lock's lifetime, renewed every chunk: a drawer that dies is taken
	// over once it lapses. Default 3 s.
	Lease time.Duration
	// Chunk is how many entrants one reserve script call serves (default and at most
	// stock.MaxReserveBatch).
	Chunk int
}

// A Server reserves a chunk of the draw's entrants of activity aid in order.
type Server interface {
	ServeDraw(ctx context.Context, aid int64, items []domain.ReserveItem) ([]stock.ReserveResult, error)
}

// Order is the draw's order of entries (domain.DrawOrder).
func Order(entries []domain.DrawEntry, seed []byte) []domain.DrawEntry {
	return domain.DrawOrder(entries, seed)
}

// Commitment is what an activity's view shows of its seed before the draw is done: the
// lowercase hex SHA-256 of its bytes ("" when it has none).
func Commitment(seed []byte) string {
	if len(seed) == 0 {
		return ""
	}
	sum := sha256.Sum256(seed)
	return hex.EncodeToString(sum[:])
}

// A Run is one instance's hold on one activity's draw.
type Run struct {
	d         *Drawer
	aid       int64
	lock      *redis.RedisLock
	order     []domain.DrawEntry
	cursor    int64
	exhausted bool // this run saw the stock gone: the rest are lost without a reserve call
	started   time.Time
}

// loserChunk is how many losers one advance call records once the stock is gone.
const loserChunk = 4096

// LockName names the lease one instance holds while it draws an activity (stock.Store.Lock).
const LockName = "draw"

// ErrLeaseLost: another instance holds the draw's lease (this one's lapsed).
var ErrLeaseLost = xerr.New(xerr.Busy, "the draw's lease lapsed")

// Begin takes the draw of activity aid when it is due, not done and its lease is free: nil
// (and no error) otherwise.
func (d *Drawer) Begin(ctx context.Context, aid int64) (*Run, error) {
	sg, err := d.Store.Sight(ctx, aid) // the stock hash and Redis's clock, at one moment
	if err == nil && !sg.Warm {
		err = stock.ErrNotWarm
	}
	snap := sg.Stock
	if err != nil || snap.DrawAt == 0 || snap.Drawn {
		return nil, err
	}
	if sg.NowMs < snap.DrawAt {
		return nil, nil // entries are still coming in (by Redis's clock, the one enter.lua reads)
	}
	lock := d.Store.Lock(aid, LockName)
	lock.SetExpire(max(int(d.lease()/time.Second), 1))
	if ok, err := lock.AcquireCtx(ctx); err != nil || !ok {
		return nil, err
	}
	r, err := d.begin(ctx, aid, lock, snap.Remaining)
	if err != nil {
		_, _ = lock.ReleaseCtx(context.WithoutCancel(ctx))
	}
	return r, err
}

func (d *Drawer) begin(ctx context.Context, aid int64, lock *redis.RedisLock, remaining int64) (*Run, error) {
	seed, err := d.Seeds.FindDrawSeed(ctx, aid)
	if err != nil {
		return nil, xerr.Unavailable(fmt.Errorf("activity %d: read the draw seed: %w", aid, err))
	}
	if len(seed) == 0 {
		return nil, fmt.Errorf("activity %d: no draw seed in MySQL", aid)
	}
	// The first run records what it serves (the audit's stock); nothing was served before it.
	if _, err := d.Seeds.FixDrawStock(ctx, aid, remaining); err != nil {
		return nil, xerr.Unavailable(fmt.Errorf("activity %d: record the draw's stock: %w", aid, err))
	}
	entries, err := d.Store.DrawEntries(ctx, aid)
	if err != nil {
		return nil, err
	}
	p, err := d.Store.Draw(ctx, aid)
	if err != nil {
		return nil, err
	}
	kept, err := d.Seeds.FindDrawCursor(ctx, aid)
	if err != nil {
		return nil, xerr.Unavailable(fmt.Errorf("activity %d: read the draw cursor: %w", aid, err))
	}
	if from := max(p.Cursor, kept); from > int64(len(entries)) {
		return nil, fmt.Errorf("activity %d: draw cursor %d past its %d entries", aid, from, len(entries))
	}
	// Never the seed: it is shown only once the draw is done.
	logx.Infof("activity %d: drawing %d entries (commitment %s) from %d (MySQL %d)", aid, len(entries),
		Commitment(seed), max(p.Cursor, kept), kept)
	r := &Run{d: d, aid: aid, lock: lock, order: Order(entries, seed), cursor: p.Cursor, started: time.Now()}
	if kept > p.Cursor {
		if err := r.resume(ctx, kept); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// resume moves Redis's cursor up to MySQL's after Redis lost it (a loss rebuild leaves no draw
// hash): the entrants before it were decided, their winners' orders restored, so those without
// an order under their entry's request id are marked lost, not served again (stock returned
// meanwhile would let an earlier loser win).
func (r *Run) resume(ctx context.Context, to int64) error {
	for r.cursor < to {
		end := min(r.cursor+loserChunk, to)
		chunk := r.order[r.cursor:end]
		served, err := r.d.Store.DrawServed(ctx, r.aid, chunk)
		if err != nil {
			return err
		}
		var winners int64
		var lost []domain.DrawEntry
		for i, ok := range served {
			if ok {
				winners++
			} else {
				lost = append(lost, chunk[i])
			}
		}
		if err := r.d.Store.AdvanceDraw(ctx, r.aid, r.cursor, end, winners, lost, false); err != nil {
			return err
		}
		r.cursor = end
	}
	return nil
}

// Step serves the next chunk of entrants (renewing the lease) and records it; done once the
// draw is decided and the activity sells in arrival order.
func (r *Run) Step(ctx context.Context) (done bool, err error) {
	if ok, err := r.lock.AcquireCtx(ctx); err != nil || !ok {
		return false, firstErr(err, ErrLeaseLost)
	}
	n := int64(len(r.order))
	size := int64(r.d.chunk())
	if r.exhausted {
		size = loserChunk // only losers left: fewer, larger script calls
	}
	to := min(r.cursor+size, n)
	chunk := r.order[r.cursor:to]
	var winners int64
	lost := chunk
	if !r.exhausted && len(chunk) > 0 {
		if winners, lost, err = r.serve(ctx, chunk); err != nil {
			return false, err
		}
	}
	last := to == n
	if last {
		// MySQL first: a rebuild after a loss reads it (the stock hash's 'drawn').
		if err := r.d.Seeds.SetDrawDone(ctx, r.aid, time.Now().UnixMilli()); err != nil {
			return false, xerr.Unavailable(err)
		}
	}
	if err := r.d.Store.AdvanceDraw(ctx, r.aid, r.cursor, to, winners, lost, last); err != nil {
		return false, err
	}
	r.cursor = to
	// MySQL after Redis: MySQL's cursor is never ahead of a chunk Redis recorded.
	if err := r.d.Seeds.SetDrawCursor(ctx, r.aid, to); err != nil {
		return false, xerr.Unavailable(fmt.Errorf("activity %d: record the draw cursor: %w", r.aid, err))
	}
	metricWinners.Add(float64(winners))
	if last {
		metricEntries.Add(float64(n))
		metricDuration.Observe(time.Since(r.started).Seconds())
	}
	return last, nil
}

// serve reserves chunk in order: its winners' count and its losers.
func (r *Run) serve(ctx context.Context, chunk []domain.DrawEntry) (int64, []domain.DrawEntry, error) {
	items := make([]domain.ReserveItem, len(chunk))
	for i, e := range chunk {
		items[i] = domain.ReserveItem{UID: e.UID, Qty: e.Qty, RequestID: e.RequestID}
	}
	var server Server = r.d.Store
	if r.d.Server != nil {
		server = r.d.Server
	}
	res, err := server.ServeDraw(ctx, r.aid, items)
	if err != nil {
		return 0, nil, err
	}
	var winners int64
	var lost []domain.DrawEntry
	remaining := int64(-1)
	for i, x := range res {
		switch code := xerr.CodeOf(x.Err); {
		case x.Err == nil:
			winners++
			remaining = x.Remaining
		case code == xerr.Busy || code == xerr.Internal:
			return 0, nil, x.Err // not decided: the chunk goes again (its winners replay)
		default: // SOLD_OUT (or any answer a buyer would get instead of an order)
			lost = append(lost, chunk[i])
		}
	}
	if remaining < 0 { // no winner in the chunk: read whether anything is left
		snap, err := r.d.Store.Stock(ctx, r.aid)
		if err != nil {
			return 0, nil, err
		}
		remaining = snap.Remaining
	}
	r.exhausted = remaining == 0
	return winners, lost, nil
}

// Finish ends the run: the lease is released (a run abandoned without Finish lapses).
func (r *Run) Finish() {
	if _, err := r.lock.ReleaseCtx(event.Untraced(context.Background())); err != nil {
		logx.Errorf("activity %d: release the draw lease (it lapses): %v", r.aid, err)
	}
}

// Run draws activity aid to the end if it is due and this instance gets the lease.
func (d *Drawer) Run(ctx context.Context, aid int64) error {
	r, err := d.Begin(ctx, aid)
	if err != nil || r == nil {
		return err
	}
	defer r.Finish()
	for {
		done, err := r.Step(ctx)
		if err != nil || done {
			if moved(err) {
				return nil // another instance took the draw over
			}
			return err
		}
	}
}

// moved tells whether err is stock.ErrDrawMoved itself (a Redis failure mid-draw, BUSY too, is no
// takeover).
func moved(err error) bool { return errors.Is(err, stock.ErrDrawMoved) }

func (d *Drawer) lease() time.Duration {
	if d.Lease <= 0 {
		return 3 * time.Second
	}
	return d.Lease
}

func (d *Drawer) chunk() int {
	if d.Chunk <= 0 || d.Chunk > stock.MaxReserveBatch {
		return stock.MaxReserveBatch
	}
	return d.Chunk
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
