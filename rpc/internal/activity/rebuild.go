package activity

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
)

var metricRebuilds = promauto.NewCounterVec(prometheus.CounterOpts{
	Namespace: "seckill",
	Subsystem: "inventory",
	Name:      "rebuilds_total",
	Help: "stock hash misses resolved, by kind: cold (never warmed), lost (rebuilt from MySQL), ended " +
		"(short-lived read copy)",
}, []string{"kind"})

// maxRebuild bounds one rebuild, the wait for the writer included.
const maxRebuild = 10 * time.Minute

// rebuilds are the rebuilds running in this process, one per activity.
type rebuilds struct {
	mu     sync.Mutex
	runs   map[int64]*rebuild
	closed bool
	wg     sync.WaitGroup
}

// rebuild is one activity's rebuild; done is closed when it ends with err.
type rebuild struct {
	done    chan struct{}
	created bool
	err     error
	cancel  context.CancelFunc
}

// start joins the rebuild of id running here, or takes the activity's lock and starts
// one (started). nil: another instance holds the lock.
func (r *rebuilds) start(l *Loader, id int64) (run *rebuild, started bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if run := r.runs[id]; run != nil {
		return run, false, nil
	}
	if r.closed {
		return nil, false, xerr.ErrBusy
	}
	lease := l.Lease
	if lease <= 0 {
		lease = 10 * time.Second
	}
	lock := l.Store.Lock(id, "")
	lock.SetExpire(max(int(lease/time.Second), 1))
	// The rebuild outlives the request that started it: no request's trace, nor one of its own.
	ctx, cancel := context.WithTimeout(event.Untraced(context.Background()), maxRebuild)
	ok, err := lock.AcquireCtx(ctx)
	if err != nil || !ok {
		cancel()
		return nil, false, xerr.Unavailable(err)
	}
	run = &rebuild{done: make(chan struct{}), cancel: cancel}
	if r.runs == nil {
		r.runs = map[int64]*rebuild{}
	}
	r.runs[id] = run
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer cancel()
		stopRenew := renew(ctx, cancel, lock, lease)
		run.created, run.err = l.rebuild(ctx, id)
		stopRenew()
		if _, err := lock.ReleaseCtx(context.WithoutCancel(ctx)); err != nil {
			logx.Errorf("rebuild of activity %d: release lock: %v", id, err)
		}
		r.mu.Lock()
		delete(r.runs, id)
		r.mu.Unlock()
		close(run.done)
	}()
	return run, true, nil
}

// renew re-acquires the lock every third of the lease; a renewal that fails cancels the rebuild.
func renew(ctx context.Context, cancel context.CancelFunc, lock *redis.RedisLock, lease time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if ok, err := lock.AcquireCtx(ctx); err != nil || !ok {
					logx.Errorf("rebuild: lease lost (%v): stopping", err)
					cancel()
					return
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

func (r *rebuilds) close() {
	r.mu.Lock()
	r.closed = true
	for _, run := range r.runs {
		run.cancel()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// rebuild resolves a stock hash miss of activity id while holding its lock: a cold activity is
// loaded, a lost one rebuilt from MySQL (docs/DESIGN.md, "Warm-up, cache backfill and recovery").
func (l *Loader) rebuild(ctx context.Context, id int64) (created bool, err error) {
	start := time.Now()
	// Between the caller's miss and the lock, another rebuild may have finished (its lock
	// already released), or marked the activity missing.
	if _, err := l.Store.Stock(ctx, id); !errors.Is(err, stock.ErrNotWarm) {
		return false, err
	}
	if err := l.checkMissing(ctx, id); err != nil {
		return false, err
	}
	rec, err := l.Source.Load(ctx, id)
	if errors.Is(err, ErrNotFound) {
		l.cacheMissing(ctx, id)
		return false, xerr.ErrActivityNotFound
	}
	if err != nil {
		return false, err
	}
	now := l.now().Unix()
	keysExp := l.KeysExpireAt(rec.Activity)
	if now >= keysExp || (rec.Epoch == 0 && now >= rec.Activity.EndTime) {
		metricRebuilds.WithLabelValues("ended").Inc()
		_, err = l.warm(ctx, rec, now+int64(l.MissingTTL/time.Second)+1, rec.Epoch)
		return false, err
	}
	var orders []domain.Order
	epoch := rec.Epoch + 1
	if rec.Epoch > 0 {
		var finished bool
		if rec, orders, finished, err = l.recoverLost(ctx, id, rec, keysExp); err != nil || finished {
			return false, err
		}
	}
	if err := ctx.Err(); err != nil {
		return false, xerr.Unavailable(err) // lease lost or stopping: leave it to the next
	}
	if rec.Epoch == 0 { // a cold cache: nothing was sold, no epoch to claim
		if err := l.Source.BumpEpoch(ctx, id, 0); err != nil {
			return false, err
		}
	}
	if created, err = l.warm(ctx, rec, keysExp, epoch); err != nil {
		return false, err
	}
	a := rec.Activity
	if err := l.Store.Activate(ctx, id, a.EndTime+int64(a.PayTimeoutSeconds)); err != nil {
		return created, err
	}
	if rec.Epoch > 0 && rec.Available > 0 {
		// A gateway may have marked the activity sold out while Redis was gone.
		if err := l.Store.StockBack(ctx, id); err != nil {
			logx.Errorf("activity %d: rebuilt, but announcing its stock failed: %v", id, err)
		}
	}
	kind := "cold"
	if rec.Epoch > 0 {
		kind = "lost"
		logx.Infof("activity %d: rebuilt from MySQL in %v (%d orders, remaining %d, locked %d, sold %d, epoch %d)",
			id, time.Since(start).Round(time.Millisecond), len(orders), rec.Available, rec.Locked, rec.Sold, epoch)
	}
	metricRebuilds.WithLabelValues(kind).Inc()
	return created, nil
}

// recoverLost rebuilds the lost book of activity id (warmed up at rec.Epoch, its keys
// expiring at keysExp) from MySQL: it claims the new epoch, then writes MySQL's book back
// to Redis, and returns that book (read after the claim). finished reports that another
// rebuilder completed first.
func (l *Loader) recoverLost(
	ctx context.Context, id int64, rec *Record, keysExp int64,
) (_ *Record, _ []domain.Order, finished bool, _ error) {
	epoch := rec.Epoch + 1
	logx.Infof("activity %d: stock hash missing after warm-up %d, before its keys' expiry: "+
		"a loss; rebuilding from MySQL", id, rec.Epoch)
	if err := l.awaitWriter(ctx, id); err != nil {
		return nil, nil, false, err
	}
	// The epoch claim, before MySQL is read: from this commit on, the writer drops every
	// change of an older epoch (one that was in flight to Kafka when Redis lost it and
	// was never acknowledged), so what is read next is the whole book the new Redis
	// sells from.
	// Still absent after the wait (a stale rebuilder may have finished meanwhile):
	// never move the epoch under a live stock hash. In the same step the claim takes
	// the new epoch, so a rebuilder stalled between its own bump and its hash write
	// can no longer write a hash behind MySQL's epoch (Recovery.ClaimEpoch).
	if err := l.Store.Recovery().ClaimEpoch(ctx, id, epoch, keysExp); err != nil {
		if errors.Is(err, stock.ErrAlreadyWarm) {
			return nil, nil, true, nil // another rebuilder finished first
		}
		return nil, nil, false, err
	}
	if err := l.Source.BumpEpoch(ctx, id, rec.Epoch); err != nil {
		return nil, nil, false, err
	}
	rec, orders, err := l.snapshot(ctx, id)
	if err != nil {
		return nil, nil, false, err
	}
	if rec.Epoch != epoch {
		return nil, nil, false, ErrEpochMoved // another rebuild bumped it after this one
	}
	holdings := map[int64]int64{}
	for _, o := range orders {
		if o.State == domain.StateReserved || o.State == domain.StatePaid {
			holdings[o.UID] += o.Quantity
		}
	}
	// What the lost Redis may have kept of the activity (a partial rollback: orders
	// that MySQL has in other states, or lacks) goes first, in the same call: only MySQL's
	// book is written back. After a flush there is nothing to delete.
	if err := l.Store.Recovery().Restore(ctx, id, keysExp, orders, holdings); err != nil {
		if errors.Is(err, stock.ErrAlreadyWarm) {
			return nil, nil, true, nil // another rebuilder finished first
		}
		return nil, nil, false, err
	}
	if err := l.restoreEntries(ctx, rec, keysExp, orders); err != nil {
		if errors.Is(err, stock.ErrAlreadyWarm) {
			return nil, nil, true, nil
		}
		return nil, nil, false, err
	}
	return rec, orders, false, nil
}

// awaitWriter notes the order topic's end offsets and waits until the writer group has
// committed past them (no Pipeline: nothing to wait for).
func (l *Loader) awaitWriter(ctx context.Context, id int64) error {
	if l.Pipeline == nil {
		return nil
	}
	ends, err := l.Pipeline.Ends(ctx)
	for err != nil {
		logx.Errorf("activity %d rebuild: order topic end offsets: %v", id, err)
		if err := sleep(ctx, time.Second); err != nil {
			return err
		}
		ends, err = l.Pipeline.Ends(ctx)
	}
	for {
		ok, err := l.Pipeline.Reached(ctx, ends)
		if err == nil && ok {
			return nil
		}
		if err != nil {
			logx.Errorf("activity %d rebuild: writer group progress: %v", id, err)
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return xerr.Unavailable(ctx.Err())
	case <-t.C:
		return nil
	}
}

// snapshot reads the activity's counters and its orders, read again until they agree.
func (l *Loader) snapshot(ctx context.Context, id int64) (*Record, []domain.Order, error) {
	for attempt := 0; ; attempt++ {
		rec, err := l.Source.Load(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		orders, err := l.Source.Orders(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		var locked, sold int64
		for _, o := range orders {
			switch o.State {
			case domain.StateReserved:
				locked += o.Quantity
			case domain.StatePaid:
				sold += o.Quantity
			}
		}
		if locked == rec.Locked && sold == rec.Sold {
			return rec, orders, nil
		}
		if attempt == 2 {
			return nil, nil, xerr.Unavailable(
				fmt.Errorf("activity %d: mysql inventory (locked %d, sold %d) disagrees with its orders "+
					"(locked %d, sold %d): not rebuilding", id, rec.Locked, rec.Sold, locked, sold),
			)
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, nil, err
		}
	}
}

func (l *Loader) warm(ctx context.Context, rec *Record, expireAt, epoch int64) (bool, error) {
	a := rec.Activity
	created, _, err := l.Store.Warmup(ctx, domain.Activity{
		ActivityID: int64(a.Id), SkuID: int64(a.SkuId), Name: a.Name,
		Counters: domain.Counters{Total: rec.Available + rec.Locked + rec.Sold,
			Remaining: rec.Available, Locked: rec.Locked, Sold: rec.Sold},
		Start: a.StartTime, End: a.EndTime, Limit: int64(a.PerUserLimit),
		PayTimeout: int64(a.PayTimeoutSeconds), ExpireAt: expireAt, Epoch: epoch,
		DrawAt: DrawAtMs(a), Drawn: a.DrawDoneAt > 0, Price: int64(a.Price),
	})
	return created, err
}
