package draw

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/metric"

	"github.com/seckill/seckill/internal/event"
)

var (
	metricEntries = metric.NewCounterVec(&metric.CounterVecOpts{Namespace: "seckill", Subsystem: "draw",
		Name: "entries_total", Help: "entries of finished opening draws"})
	metricWinners = metric.NewCounterVec(&metric.CounterVecOpts{Namespace: "seckill", Subsystem: "draw",
		Name: "winners_total", Help: "entrants the opening draws served an order"})
	// In seconds (Prometheus's base unit): go-zero's HistogramVec observes whole numbers only.
	metricDuration = promauto.NewHistogram(prometheus.HistogramOpts{Namespace: "seckill", Subsystem: "draw",
		Name: "duration_seconds", Help: "from a draw's start on this instance to its end",
		Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10}})
)

// Loop looks at the active activities every Interval and draws the due ones (go-zero
// service.Service: Start blocks until Stop).
type Loop struct {
	Drawer   *Drawer
	Interval time.Duration // default 200 ms
	Active   func(ctx context.Context) ([]int64, error)

	stop    chan struct{}
	once    sync.Once
	mu      sync.Mutex
	running map[int64]bool
	wg      sync.WaitGroup
	quiet   quietLog
}

// NewLoop is a loop over the activities active lists.
func NewLoop(d *Drawer, active func(ctx context.Context) ([]int64, error)) *Loop {
	return &Loop{Drawer: d, Active: active, stop: make(chan struct{}), running: map[int64]bool{}}
}

// Start runs the loop until Stop.
func (l *Loop) Start() {
	iv := l.Interval
	if iv <= 0 {
		iv = 200 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(event.Untraced(context.Background())) // no request's: no trace of its own
	defer cancel()
	go func() { <-l.stop; cancel() }()
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			l.wg.Wait()
			return
		case <-t.C:
			l.tick(ctx)
		}
	}
}

// Stop ends the loop and the draws it runs (their leases lapse, another instance resumes).
func (l *Loop) Stop() { l.once.Do(func() { close(l.stop) }) }

func (l *Loop) tick(ctx context.Context) {
	ids, err := l.Active(ctx)
	if err != nil {
		l.quiet.errorf(0, "draw: list active activities: %v", err)
		return
	}
	l.quiet.ok(0)
	for _, aid := range ids {
		l.mu.Lock()
		busy := l.running[aid]
		l.running[aid] = true
		l.mu.Unlock()
		if busy {
			continue
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			defer func() { l.mu.Lock(); delete(l.running, aid); l.mu.Unlock() }()
			err := l.Drawer.Run(ctx, aid)
			switch {
			case err == nil:
				l.quiet.ok(aid)
			case ctx.Err() == nil:
				l.quiet.errorf(aid, "draw of activity %d: %v (retried)", aid, err)
			}
		}()
	}
}

// quietEvery is how often one failing source is logged again while it keeps failing: a Redis
// outage fails every tick (200 ms) for every active activity.
const quietEvery = 10 * time.Second

// quietLog logs a source's error when it starts failing and then at most every quietEvery
// (with the count of the errors not logged) until it succeeds again.
type quietLog struct {
	mu   sync.Mutex
	seen map[int64]*quietSource // source (an activity id; 0 the activity list) -> its failing run
}

type quietSource struct {
	logged  time.Time
	skipped int
}

func (q *quietLog) errorf(src int64, format string, args ...any) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.seen == nil {
		q.seen = map[int64]*quietSource{}
	}
	s := q.seen[src]
	switch {
	case s == nil:
		q.seen[src] = &quietSource{logged: time.Now()}
	case time.Since(s.logged) < quietEvery:
		s.skipped++
		return
	default:
		format += fmt.Sprintf(" (and %d more like it since %s)", s.skipped, s.logged.Format(time.TimeOnly))
		s.logged, s.skipped = time.Now(), 0
	}
	logx.Errorf(format, args...)
}

func (q *quietLog) ok(src int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.seen, src)
}
