package reconcile

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/redis"
	"github.com/zeromicro/go-zero/core/syncx"
)

const (
	// sharedReportTTL is how long a finished report answers callers that waited for it.
	sharedReportTTL = 10 * time.Second
	// lockPoll is how often a caller waiting on another instance's run looks for its report.
	lockPoll = 50 * time.Millisecond
	// lockLease is the lock's lease, renewed every lockLease/3 while the run lasts: a holder
	// that died, or whose release failed (its Redis master was being replaced), holds the
	// others up for at most this long. With the whole run's timeout as the lease (a minute),
	// a release lost in a Redis Cluster failover left every caller waiting past the fault
	// table's deadline.
	lockLease = 5 * time.Second
	// lockName names the lease of the one instance comparing an activity's books (stock.Store.Lock).
	lockName = "recon"
)

var metricRuns = promauto.NewCounter(prometheus.CounterOpts{
	Namespace: "seckill", Subsystem: "inventory", Name: "reconcile_runs_total",
	Help: "comparisons of an activity's books this instance ran (callers sharing one count once)",
})

// Single runs at most one comparison of an activity's books at a time across every
// instance (a Redis lock per activity), and callers that ask while one runs, on this
// instance or another, share its report: a hundred merchants' tabs cost one read of every
// order, not a hundred (docs/DESIGN.md "Reconciliation").
type Single struct {
	r      *Reconciler
	flight syncx.SingleFlight
	now    func() time.Time
}

// NewSingle shares r's runs; r's Conf.Timeout bounds one run (and the lock's lease).
func NewSingle(r *Reconciler) *Single {
	return &Single{r: r, flight: syncx.NewSingleFlight(), now: time.Now}
}

// Run is Reconciler.Run, shared: the report of a run that began reading after this call
// began, found in progress or started. A run already reading when the call began is not
// shared with it: the books may have changed between its reads and the call (a caller that
// waited for a change and then asked was answered from before the change).
func (s *Single) Run(ctx context.Context, aid int64) (Report, error) {
	asked := s.now().UnixNano()
	for {
		v, err := s.flight.Do(strconv.FormatInt(aid, 10), func() (any, error) {
			// Shared by this instance's callers: not cancelled by the first one's going away.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.r.c.Timeout)
			defer cancel()
			return s.runOrWait(rctx, aid, asked)
		})
		if err != nil {
			return Report{}, err
		}
		if k := v.(kept); k.started >= asked {
			return k.report, nil
		}
		// The flight this call joined was another caller's, who asked earlier: the run it
		// shared may have begun before this call. Each next flight begins after the last one.
		if err := ctx.Err(); err != nil {
			return Report{}, err
		}
	}
}

// kept is a run's report and when the run began reading (unix ns).
type kept struct {
	report  Report
	started int64
}

// runOrWait takes aid's lock and runs, or waits for the holder's report of a run begun at or
// after asked (unix ns); it takes the lock itself when the holder left none.
func (s *Single) runOrWait(ctx context.Context, aid, asked int64) (kept, error) {
	lock := s.r.store.Lock(aid, lockName)
	lock.SetExpire(int(lockLease / time.Second))
	for {
		if k, ok := s.shared(ctx, aid, asked); ok {
			return k, nil
		}
		ok, err := lock.AcquireCtx(ctx)
		if err != nil {
			return kept{}, err
		}
		if ok {
			defer func() {
				if _, err := lock.ReleaseCtx(context.WithoutCancel(ctx)); err != nil {
					logx.WithContext(ctx).Errorf("reconcile %d: release the lock: %v", aid, err)
				}
			}()
			stop := s.renew(ctx, aid, lock)
			defer stop()
			return s.run(ctx, aid)
		}
		select {
		case <-ctx.Done():
			return kept{}, ctx.Err()
		case <-time.After(lockPoll):
		}
	}
}

// renew keeps the lock's lease while the run lasts (go-zero's RedisLock: its holder's acquire
// extends it); the returned func stops renewing.
func (s *Single) renew(ctx context.Context, aid int64, lock *redis.RedisLock) func() {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(lockLease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if ok, err := lock.AcquireCtx(ctx); err != nil || !ok {
					logx.WithContext(ctx).Errorf("reconcile %d: renew the lock: held %v, %v", aid, ok, err)
				}
			}
		}
	}()
	return func() { close(done) }
}

// run compares the books and keeps the report, with when the run began, for the callers
// waiting on other instances.
func (s *Single) run(ctx context.Context, aid int64) (kept, error) {
	metricRuns.Inc()
	started := s.now().UnixNano()
	rep, err := s.r.Run(ctx, aid)
	if err != nil {
		return kept{}, err
	}
	if raw, err := json.Marshal(rep); err == nil {
		if err := s.r.records.saveReport(ctx, aid, started, raw, sharedReportTTL); err != nil {
			logx.WithContext(ctx).Errorf("reconcile %d: keep the report: %v", aid, err)
		}
	}
	return kept{report: rep, started: started}, nil
}

// shared is the kept report of aid when its run began at or after asked (unix ns).
func (s *Single) shared(ctx context.Context, aid, asked int64) (kept, bool) {
	started, raw, ok, err := s.r.records.lastReport(ctx, aid)
	if err != nil || !ok || started < asked {
		return kept{}, false
	}
	var rep Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		logx.WithContext(ctx).Errorf("reconcile %d: kept report: %v", aid, err)
		return kept{}, false
	}
	return kept{report: rep, started: started}, true
}
