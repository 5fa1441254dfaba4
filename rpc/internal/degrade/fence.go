// Package degrade is degrade mode's fence (config `Degrade: mysql`): which book sells an
// activity now (the mode in MySQL, read under a lease), the switch to MySQL when Redis is
// down, and the hand-back to Redis through the rebuild. docs/DESIGN.md, "Degrade mode".
package degrade

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/breaker"
	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/syncx"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/redisx"
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
		Help: "1 while this instance sees the activity served from MySQL (degrade mode) or being rebuilt " +
			"into Redis; deleted when Redis sells it again",
	}, []string{"activity"})
	metricSwitches = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: "seckill",
		Subsystem: "inventory",
		Name:      "mode_switches_total",
		Help:      "activity mode switches made by this instance, by target mode (mysql, rebuilding, redis)",
	}, []string{"to"})
)

// The known targets exist at 0 from the start, so that increase() sees the first switch.
func init() {
	for _, to := range []string{model.ModeMySQL, model.ModeRebuilding, model.ModeRedis} {
		metricSwitches.WithLabelValues(to)
	}
}

var (
	errSwitching  = xerr.New(xerr.Busy, "switching to degrade mode, retry with the same request_id")
	errRebuilding = xerr.New(xerr.Busy, "the activity is being rebuilt into Redis, retry with the same request_id")
)

// Conf tunes degrade mode.
type Conf struct {
	// Concurrency bounds the MySQL transactions of one activity on one instance; over it, BUSY.
	Concurrency int `json:",default=32,range=[1:10000]"`
	// LeaseMs (L): how long a read of an activity's mode lets the Redis book sell; MySQL sells 2L after the switch.
	LeaseMs int `json:",default=1000,range=[50:60000]"`
	// RelayMarginMs: how much longer than 2L an instance that cannot reach Redis waits for another's relay.
	RelayMarginMs int `json:",default=1000,range=[0:60000]"`
	// RecoverMs: how often an instance checks whether Redis is back for the activities it sees degraded.
	RecoverMs int `json:",default=1000,range=[50:60000]"`
}

// Rebuilder rebuilds an activity's Redis book from MySQL (activity.Loader.Stock).
type Rebuilder interface {
	Stock(ctx context.Context, id int64) (domain.Activity, error)
}

// A Fence says which book sells an activity now and moves activities between the books; one per process.
type Fence struct {
	// On: Degrade is mysql. Off, the fence reads nothing and always routes to Redis.
	On        bool
	Conf      Conf
	Inventory model.InventoryModel
	Store     *stock.Store
	Rebuild   Rebuilder
	// Pipeline, when set, is the writer group's progress MySQL waits on before it sells.
	Pipeline activity.Pipeline
	// Known, when set, says whether an activity id may exist (the Bloom filter of known ids).
	Known func(ctx context.Context, aid int64) bool
	// Probe is a client of its own that asks Redis for a PING outside go-zero's breaker
	// (redisx.Answers); nil: Store.Ping, which the breaker drops too (a drop is then taken for
	// an outage, as before Dec 2026; tests of other rules leave it nil). Its owner closes it
	// once nothing serves (svc.ServiceContext.Close): the fence asks it while calls come in.
	Probe red.UniversalClient

	readsOnce sync.Once
	reads     syncx.SingleFlight // set by flight
	mu        sync.Mutex
	views     map[int64]*view
	// recovering: the activities whose hand-back to Redis runs here (recoverAsync).
	recovering map[int64]bool
	// life guards stop, done and stopped: go-zero's service group may call Stop before Start.
	life    sync.Mutex
	stop    chan struct{}
	done    chan struct{}
	stopped bool
}

// A view is an activity's mode as this instance last read it.
type view struct {
	mode   string
	readAt time.Time
	// sellAt: when this instance may sell from MySQL (2L after it first saw mode mysql), once caught up.
	sellAt time.Time
	caught bool
	gen    int
}

func (f *Fence) lease() time.Duration { return time.Duration(f.Conf.LeaseMs) * time.Millisecond }

// Route says which book serves activity aid now (mysql true: the MySQL book) and, for the
// Redis book, the end of this instance's lease (sellBy; zero when the fence is off).
func (f *Fence) Route(ctx context.Context, aid int64) (mysql bool, sellBy time.Time, err error) {
	if !f.On {
		return false, time.Time{}, nil
	}
	v, err := f.view(ctx, aid)
	if err != nil {
		return false, time.Time{}, err
	}
	switch v.mode {
	case model.ModeRedis:
		return false, v.readAt.Add(f.lease()), nil
	case model.ModeMySQL:
		if time.Now().Before(v.sellAt) || !v.caught {
			return false, time.Time{}, errSwitching
		}
		return true, time.Time{}, nil
	default:
		return false, time.Time{}, errRebuilding
	}
}

// view returns the activity's mode as this instance sees it, re-read when older than L.
func (f *Fence) view(ctx context.Context, aid int64) (view, error) {
	v, fresh, seen := f.fresh(aid)
	if fresh {
		return v, nil
	}
	// One read per activity at a time, shared by the callers that find the view stale together.
	got, err := f.flight().Do(strconv.FormatInt(aid, 10), func() (any, error) {
		// A caller that found the view stale may get here after the read it would have shared
		// ended: the view that read left is its answer (TestModeReadsAreShared saw 3 reads).
		if v, fresh, _ := f.fresh(aid); fresh {
			return v, nil
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readTimeout)
		defer cancel()
		return f.read(rctx, aid, seen)
	})
	if err != nil {
		return view{}, err
	}
	return got.(view), nil
}

// fresh is the activity's view and whether it is younger than L; seen: there is one.
func (f *Fence) fresh(aid int64) (v view, fresh, seen bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.views[aid]
	if p == nil {
		return view{}, false, false
	}
	return *p, time.Since(p.readAt) < f.lease(), true
}

func (f *Fence) flight() syncx.SingleFlight {
	f.readsOnce.Do(func() { f.reads = syncx.NewSingleFlight() })
	return f.reads
}

// readTimeout bounds a shared mode read (it outlives the call that started it).
const readTimeout = 3 * time.Second

// read reads the activity's mode from MySQL. Known (the Bloom filter) is asked only for
// an activity this instance has not seen: one whose mode it has read exists.
func (f *Fence) read(ctx context.Context, aid int64, seen bool) (view, error) {
	readAt := time.Now()
	if !seen && f.Known != nil && !f.Known(ctx, aid) {
		return view{mode: model.ModeRedis, readAt: readAt}, nil // no such activity; not cached
	}
	mode, err := f.Inventory.FindMode(ctx, aid)
	if errors.Is(err, model.ErrNotFound) {
		// No such activity: the Redis path answers (ACTIVITY_NOT_FOUND); not cached.
		return view{mode: model.ModeRedis, readAt: readAt}, nil
	}
	if err != nil {
		return view{}, xerr.Unavailable(err) // the lease cannot be renewed: stop selling
	}
	return f.observe(aid, mode, readAt), nil
}

// Seen records a mode of activity aid read just now (the MySQL book found it not mysql).
func (f *Fence) Seen(aid int64, mode string) { f.observe(aid, mode, time.Now()) }

// observe records a mode read at readAt and marks the transitions seen here.
func (f *Fence) observe(aid int64, mode string, readAt time.Time) view {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.views == nil {
		f.views = map[int64]*view{}
	}
	v := f.views[aid]
	if v == nil {
		v = &view{mode: model.ModeRedis}
		f.views[aid] = v
	}
	if mode == model.ModeMySQL && v.mode != model.ModeMySQL {
		v.sellAt = readAt.Add(2 * f.lease())
		v.gen++
		v.caught = false
		go f.awaitBook(aid, v.gen, v.sellAt)
	}
	if mode != v.mode {
		logx.Infof("degrade: activity %d mode %s -> %s (seen by this instance)", aid, v.mode, mode)
	}
	if mode == model.ModeRedis {
		metricDegraded.DeleteLabelValues(strconv.FormatInt(aid, 10))
	} else {
		metricDegraded.WithLabelValues(strconv.FormatInt(aid, 10)).Set(1)
	}
	v.mode, v.readAt = mode, readAt
	return *v
}

// awaitBook marks switch generation gen caught up once MySQL is the complete book: sellAt
// passed, the activity's outbox relayed (or out of reach for RelayMarginMs), the writer past Kafka's ends.
func (f *Fence) awaitBook(aid int64, gen int, sellAt time.Time) {
	ctx, cancel := context.WithTimeout(event.Untraced(context.Background()), 10*time.Minute)
	defer cancel()
	current := func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		v := f.views[aid]
		return v != nil && v.gen == gen && v.mode == model.ModeMySQL
	}
	time.Sleep(time.Until(sellAt))
	margin := time.Now().Add(time.Duration(f.Conf.RelayMarginMs) * time.Millisecond)
	for current() {
		n, err := f.Store.Outbox().Len(ctx, aid)
		if err == nil && n == 0 {
			break
		}
		if err != nil && time.Now().After(margin) {
			logx.Errorf("degrade: activity %d: its outbox is out of reach (%v): selling from MySQL what Kafka holds",
				aid, err)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if f.Pipeline != nil {
		marks, err := f.Pipeline.Ends(ctx)
		for err != nil {
			logx.Errorf("degrade: activity %d: order topic end offsets: %v", aid, err)
			if !current() || ctx.Err() != nil {
				return
			}
			time.Sleep(time.Second)
			marks, err = f.Pipeline.Ends(ctx)
		}
		for {
			if !current() || ctx.Err() != nil {
				return
			}
			if ok, err := f.Pipeline.Reached(ctx, marks); err == nil && ok {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	f.mu.Lock()
	if v := f.views[aid]; v != nil && v.gen == gen {
		v.caught = true
		logx.Infof("degrade: activity %d: MySQL sells (degrade mode)", aid)
	}
	f.mu.Unlock()
}

// RedisDown says whether err from the Redis book is Redis being unreachable (BUSY with its cause),
// not a miss, a loss or a business answer.
func RedisDown(err error) bool {
	var e *xerr.Error
	if errors.As(err, &e) {
		// A miss (stock.ErrNotWarm wraps xerr.ErrBusy) or a backfill wait carries no
		// cause; a failed Redis call does (xerr.Unavailable).
		return e.Code == xerr.Busy && e.Cause != nil
	}
	return xerr.IsDependencyFailure(err)
}

// Failed is told every error of the Redis book for activity aid: with Redis down it switches the
// activity to mysql and answers BUSY; any other error it returns as it is.
func (f *Fence) Failed(ctx context.Context, aid int64, err error) error {
	if !f.On || !RedisDown(err) {
		return err
	}
	// A call go-zero's Redis breaker dropped is no sign that Redis is down: the breaker
	// counts the outage's failures and drops for up to its 10 s window after Redis is back,
	// and an activity just handed back to Redis was switched to mysql again on a dropped
	// buyer's call (a flap, a second rebuild). Redis itself is asked, around the breaker;
	// the dropped call is answered BUSY.
	if errors.Is(err, breaker.ErrServiceUnavailable) && f.answers(ctx) {
		return err
	}
	switched, serr := f.Inventory.SwitchMode(ctx, aid, model.ModeRedis, model.ModeMySQL)
	if serr != nil {
		logx.Errorf("degrade: activity %d: Redis down (%v), and switching to mysql failed: %v", aid, err, serr)
		return err
	}
	if switched {
		metricSwitches.WithLabelValues(model.ModeMySQL).Inc()
		logx.Errorf("degrade: activity %d switched to mysql (degrade mode): Redis unreachable: %v", aid, err)
	}
	f.observe(aid, model.ModeMySQL, time.Now())
	return errSwitching
}

// answerWait bounds the PING of answers: a Redis that does not answer within it is down.
const answerWait = time.Second

func (f *Fence) answers(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, answerWait)
	defer cancel()
	if f.Probe == nil {
		return f.Store.Ping(ctx)
	}
	return redisx.Answers(ctx, f.Probe)
}

// Degraded lists the activities this instance sees served from MySQL or being rebuilt.
func (f *Fence) Degraded() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int64
	for aid, v := range f.views {
		if v.mode != model.ModeRedis {
			out = append(out, aid)
		}
	}
	return out
}
