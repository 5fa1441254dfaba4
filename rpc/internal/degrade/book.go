// Package degrade is degrade mode (config `Degrade: mysql`): while Redis is unreachable
// for an activity the inventory service sells it from MySQL, and a fence in MySQL (the
// activity's mode, inventory.mode) makes sure only one book sells at a time.
//
//   - mode redis: Redis sells. An instance sells from Redis only under a lease: its view of
//     the mode, re-read from MySQL at least every Lease (cached between reads), says redis
//     and is younger than Lease. A view it cannot renew (MySQL unreachable) stops it.
//   - A Redis call failing as a dependency failure (Redis down: a BUSY carrying its cause,
//     not a miss nor a loss) makes the instance switch the mode redis → mysql (a
//     conditional UPDATE: one switch), and answer BUSY.
//   - mode mysql: every instance serves the activity from MySQL, but only 2×Lease after it
//     first saw the mode mysql (every Redis seller's lease has lapsed by then); each
//     reservation, payment, cancel and expiry is one MySQL transaction that starts by
//     locking the inventory row and checking mode = mysql (SELECT ... FOR UPDATE).
//   - Back to Redis only through the rebuild: once Redis answers again, one instance (a
//     RedisLock, and the conditional UPDATE mysql → rebuilding) deletes whatever Redis still
//     holds of the activity (stock.Store.Forget), rebuilds it from MySQL (the loader's
//     rebuild of a loss: MySQL is then the complete book) and sets the mode redis.
package degrade

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/sqlx"
	"github.com/zeromicro/go-zero/core/syncx"

	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/activity"
)

var (
	metricDegraded = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "seckill",
		Subsystem: "inventory",
		Name:      "degraded",
		Help:      "1 while this instance sees the activity served from MySQL (degrade mode) or being rebuilt into Redis; deleted when Redis sells it again",
	}, []string{"activity"})
	metricSwitches = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: "seckill",
		Subsystem: "inventory",
		Name:      "mode_switches_total",
		Help:      "activity mode switches made by this instance, by target mode (mysql, rebuilding, redis)",
	}, []string{"to"})
)

// Conf tunes degrade mode.
type Conf struct {
	// Concurrency bounds the transactions one instance runs into MySQL per activity in
	// degrade mode; over it the call answers BUSY at once.
	Concurrency int `json:",default=32,range=[1:10000]"`
	// LeaseMs (L): an instance re-reads an activity's mode at least every L and sells
	// from Redis only on a view younger than L; MySQL sells 2L after the switch.
	LeaseMs int `json:",default=1000,range=[50:60000]"`
	// RelayMarginMs: when this instance cannot reach Redis to see the activity's outbox
	// empty, how much longer than 2L it waits for the relay of an instance that can, before
	// it takes Kafka's end offsets (the writer must have consumed them before MySQL sells).
	RelayMarginMs int `json:",default=1000,range=[0:60000]"`
	// RecoverMs: how often an instance checks whether Redis is back for the activities it
	// sees in degrade mode.
	RecoverMs int `json:",default=1000,range=[50:60000]"`
}

// Rebuilder rebuilds an activity's Redis book from MySQL (activity.Loader.Stock: a miss
// after a loss is rebuilt; BUSY while it runs).
type Rebuilder interface {
	Stock(ctx context.Context, id int64) (stock.Snapshot, error)
}

// Book is degrade mode's state, one per process (held in the ServiceContext).
type Book struct {
	// On: Degrade is mysql. Off, nothing here reads MySQL: the Redis path runs unfenced,
	// as before degrade mode (every instance must have the same setting).
	On         bool
	Conf       Conf
	DB         sqlx.SqlConn
	Inventory  model.InventoryModel
	Orders     model.SeckillOrderModel
	Activities model.ActivityModel
	Store      *stock.Store
	Rebuild    Rebuilder
	// Pipeline, when set, makes MySQL sell only once the writer has consumed what was on
	// Kafka when this instance first saw the mode mysql (MySQL's counters then hold every
	// Redis sale that reached Kafka).
	Pipeline activity.Pipeline
	// OnReserve, when set, is told of every reservation this instance made, the book that
	// made it and when the call began and ended (tests: the fence's windows).
	OnReserve func(aid int64, mysql bool, began, ended time.Time)
	// Now is the clock of the MySQL path (nil: time.Now).
	Now func() time.Time
	// Known, when set, says whether an activity id may exist (the loader's Bloom filter):
	// an id it rules out is routed to Redis without a mode read, which answers it
	// ACTIVITY_NOT_FOUND without MySQL, so random ids stop before MySQL here too.
	Known func(ctx context.Context, aid int64) bool

	readsOnce sync.Once
	reads     syncx.SingleFlight // set by flight
	mu        sync.Mutex
	views     map[int64]*view
	sems      map[int64]chan struct{}
	// life guards stop, done and stopped: go-zero's service group may call Stop while
	// Start is still running (a service that failed to start), or before it.
	life    sync.Mutex
	stop    chan struct{}
	done    chan struct{}
	stopped bool
}

type view struct {
	mode   string
	readAt time.Time
	// sellAt: when this instance may sell from MySQL (2L after it first saw mode mysql),
	// once caught (the writer has consumed what Kafka held then) for the switch gen.
	sellAt time.Time
	caught bool
	gen    int
}

func (b *Book) lease() time.Duration { return time.Duration(b.Conf.LeaseMs) * time.Millisecond }

func (b *Book) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// Route says which book serves activity aid now: mysql false → the Redis path (under a
// lease younger than L); true → the MySQL path. BUSY while the mode is rebuilding, while
// a switch to mysql is younger than 2L here, or when the mode cannot be read.
func (b *Book) Route(ctx context.Context, aid int64) (mysql bool, err error) {
	mysql, _, err = b.RouteBy(ctx, aid)
	return mysql, err
}

// RouteBy is Route that also says, for the Redis path, until when this instance's lease
// lets it sell: the end of the view it routed by (read at most L ago). A reservation
// passes it to the reserve script (stock.Store.ReserveBy), which sells nothing past it by
// Redis's clock: the lease bounds when the sale happens in Redis, not only when the call
// began, so a call delayed on its way (a Redis write stall, a failover's CLIENT PAUSE,
// go-redis redialling) cannot sell after MySQL may have started to. Zero when degrade mode
// is off (no fence) or for the MySQL path.
func (b *Book) RouteBy(ctx context.Context, aid int64) (mysql bool, sellBy time.Time, err error) {
	if !b.On {
		return false, time.Time{}, nil
	}
	v, err := b.view(ctx, aid)
	if err != nil {
		return false, time.Time{}, err
	}
	switch v.mode {
	case model.ModeRedis:
		return false, v.readAt.Add(b.lease()), nil
	case model.ModeMySQL:
		if time.Now().Before(v.sellAt) || !v.caught {
			return false, time.Time{}, xerr.New(xerr.Busy, "switching to degrade mode, retry with the same request_id")
		}
		return true, time.Time{}, nil
	default:
		return false, time.Time{}, xerr.New(xerr.Busy, "the activity is being rebuilt into Redis, retry with the same request_id")
	}
}

// view returns the activity's mode as this instance sees it, re-read when older than L.
func (b *Book) view(ctx context.Context, aid int64) (view, error) {
	b.mu.Lock()
	v := b.views[aid]
	if v != nil && time.Since(v.readAt) < b.lease() {
		out := *v
		b.mu.Unlock()
		return out, nil
	}
	seen := v != nil
	b.mu.Unlock()
	// One read per activity at a time: the callers that find the view stale together
	// share it (its readAt is when it began, so their leases are no longer than their
	// own read's would be). Otherwise every call re-reads while a read is slower than L
	// (Redis cut under the Bloom check, a loaded MySQL), and the reads, not the book,
	// bound what the instance serves.
	got, err := b.flight().Do(strconv.FormatInt(aid, 10), func() (any, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readTimeout)
		defer cancel()
		return b.read(rctx, aid, seen)
	})
	if err != nil {
		return view{}, err
	}
	return got.(view), nil
}

func (b *Book) flight() syncx.SingleFlight {
	b.readsOnce.Do(func() { b.reads = syncx.NewSingleFlight() })
	return b.reads
}

// readTimeout bounds a shared mode read (it outlives the call that started it).
const readTimeout = 3 * time.Second

// read reads the activity's mode from MySQL. Known (the Bloom filter) is asked only for
// an activity this instance has not seen: one whose mode it has read exists.
func (b *Book) read(ctx context.Context, aid int64, seen bool) (view, error) {
	readAt := time.Now()
	if !seen && b.Known != nil && !b.Known(ctx, aid) {
		return view{mode: model.ModeRedis, readAt: readAt}, nil // no such activity; not cached
	}
	mode, err := b.Inventory.FindMode(ctx, aid)
	if errors.Is(err, model.ErrNotFound) {
		// No such activity: the Redis path answers (ACTIVITY_NOT_FOUND); not cached.
		return view{mode: model.ModeRedis, readAt: readAt}, nil
	}
	if err != nil {
		return view{}, xerr.Unavailable(err) // the lease cannot be renewed: stop selling
	}
	return b.observe(aid, mode, readAt), nil
}

// observe records a mode read at readAt and marks the transitions seen here.
func (b *Book) observe(aid int64, mode string, readAt time.Time) view {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.views == nil {
		b.views = map[int64]*view{}
	}
	v := b.views[aid]
	if v == nil {
		v = &view{mode: model.ModeRedis}
		b.views[aid] = v
	}
	if mode == model.ModeMySQL && v.mode != model.ModeMySQL {
		v.sellAt = readAt.Add(2 * b.lease())
		v.gen++
		v.caught = false
		go b.awaitBook(aid, v.gen, v.sellAt)
	}
	if mode != v.mode {
		logx.Infof("degrade: activity %d mode %s -> %s (seen by this instance)", aid, v.mode, mode)
	}
	if mode == model.ModeRedis {
		metricDegraded.DeleteLabelValues(label(aid))
	} else {
		metricDegraded.WithLabelValues(label(aid)).Set(1)
	}
	v.mode, v.readAt = mode, readAt
	return *v
}

// awaitBook makes MySQL the complete book before it sells (switch generation gen only):
// it waits until sellAt (every Redis seller's lease has lapsed), until the relay moved the
// activity's outbox to Kafka (seen empty; when Redis is unreachable here, RelayMarginMs
// more instead), then until the writer group has committed past Kafka's end offsets.
// What Redis acknowledged and no relay can reach (Redis down everywhere) is the window
// of DESIGN.md's "Failure stance".
func (b *Book) awaitBook(aid int64, gen int, sellAt time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	current := func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		v := b.views[aid]
		return v != nil && v.gen == gen && v.mode == model.ModeMySQL
	}
	time.Sleep(time.Until(sellAt))
	margin := time.Now().Add(time.Duration(b.Conf.RelayMarginMs) * time.Millisecond)
	for current() {
		n, err := b.Store.Outbox().Len(ctx, aid)
		if err == nil && n == 0 {
			break
		}
		if err != nil && time.Now().After(margin) {
			logx.Errorf("degrade: activity %d: its outbox is out of reach (%v): selling from MySQL what Kafka holds", aid, err)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if b.Pipeline != nil {
		marks, err := b.Pipeline.Ends(ctx)
		for err != nil {
			logx.Errorf("degrade: activity %d: order topic end offsets: %v", aid, err)
			if !current() || ctx.Err() != nil {
				return
			}
			time.Sleep(time.Second)
			marks, err = b.Pipeline.Ends(ctx)
		}
		for {
			if !current() || ctx.Err() != nil {
				return
			}
			if ok, err := b.Pipeline.Reached(ctx, marks); err == nil && ok {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	b.mu.Lock()
	if v := b.views[aid]; v != nil && v.gen == gen {
		v.caught = true
		logx.Infof("degrade: activity %d: MySQL sells (degrade mode)", aid)
	}
	b.mu.Unlock()
}

// RedisDown says whether err from the Redis path is Redis being unreachable (a dependency
// failure, BUSY with its cause): not a miss (not warm), not a loss, not a business answer.
func RedisDown(err error) bool {
	var e *xerr.Error
	if errors.As(err, &e) {
		// A miss (stock.ErrNotWarm wraps xerr.ErrBusy) or a backfill wait carries no
		// cause; a failed Redis call does (xerr.Unavailable).
		return e.Code == xerr.Busy && e.Cause != nil
	}
	return xerr.IsDependencyFailure(err)
}

// Failed is called with every error of the Redis path for activity aid: when degrade
// mode is on and Redis is down, it switches the activity to mysql (one instance's UPDATE
// wins; the others see it at their next read). It returns the error to answer (BUSY: MySQL
// sells 2L later).
func (b *Book) Failed(ctx context.Context, aid int64, err error) error {
	if !b.On || !RedisDown(err) {
		return err
	}
	switched, serr := b.Inventory.SwitchMode(ctx, aid, model.ModeRedis, model.ModeMySQL)
	if serr != nil {
		logx.Errorf("degrade: activity %d: Redis down (%v), and switching to mysql failed: %v", aid, err, serr)
		return err
	}
	if switched {
		metricSwitches.WithLabelValues(model.ModeMySQL).Inc()
		logx.Errorf("degrade: activity %d switched to mysql (degrade mode): Redis unreachable: %v", aid, err)
	}
	b.observe(aid, model.ModeMySQL, time.Now())
	return xerr.New(xerr.Busy, "switching to degrade mode, retry with the same request_id")
}

// Degraded lists the activities this instance sees served from MySQL or being rebuilt.
func (b *Book) Degraded() []int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []int64
	for aid, v := range b.views {
		if v.mode != model.ModeRedis {
			out = append(out, aid)
		}
	}
	return out
}

// acquire takes a slot of the activity's semaphore, or answers BUSY.
func (b *Book) acquire(aid int64) (release func(), err error) {
	b.mu.Lock()
	if b.sems == nil {
		b.sems = map[int64]chan struct{}{}
	}
	sem := b.sems[aid]
	if sem == nil {
		sem = make(chan struct{}, b.Conf.Concurrency)
		b.sems[aid] = sem
	}
	b.mu.Unlock()
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	default:
		return nil, xerr.New(xerr.Busy, "degrade mode: too many requests into MySQL, retry with the same request_id")
	}
}

// Start runs the recovery loop: every RecoverMs, for each activity seen in degrade mode,
// if Redis answers, hand it back to Redis (Recover).
func (b *Book) Start() {
	rds := b.Store.Redis()
	if !b.On {
		return
	}
	b.life.Lock()
	defer b.life.Unlock()
	if b.stopped || b.stop != nil {
		return
	}
	stop, done := make(chan struct{}), make(chan struct{})
	b.stop, b.done = stop, done
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-stop
		cancel() // a recovery in progress stops; the mode lock lapses
	}()
	go func() {
		defer close(done)
		t := time.NewTicker(time.Duration(b.Conf.RecoverMs) * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			ids := b.Degraded()
			if len(ids) == 0 {
				continue
			}
			pctx, pcancel := context.WithTimeout(ctx, time.Second)
			up := rds.PingCtx(pctx)
			pcancel()
			if !up {
				continue
			}
			for _, aid := range ids {
				if err := b.Recover(ctx, aid); err != nil {
					logx.Errorf("degrade: activity %d: back to Redis: %v", aid, err)
				}
			}
		}
	}()
}

// Stop ends the recovery loop; after it, Start does nothing.
func (b *Book) Stop() {
	b.life.Lock()
	defer b.life.Unlock()
	b.stopped = true
	if b.stop != nil {
		close(b.stop)
		<-b.done
		b.stop = nil
	}
}

func label(aid int64) string { return formatID(aid) }
