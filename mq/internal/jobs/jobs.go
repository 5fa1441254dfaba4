// Package jobs is the scheduled work that keeps a sale honest after the burst: releasing
// unpaid orders (expiry), comparing Redis with MySQL (reconciliation) and warming up
// activities shortly before they start. Each job is a ticker loop (a service.Service) in
// the mq ServiceGroup beside the writer. Every job is idempotent, so several mq instances
// may run the same tick: expire_due re-checks each order inside its script, reconciliation
// only reads (plus a small history key), warm-up is set-if-absent.
package jobs

import (
	"context"
	"sync"
	"time"

	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/service"
	"github.com/zeromicro/go-zero/core/stores/sqlx"
	ztrace "github.com/zeromicro/go-zero/core/trace"
	"go.opentelemetry.io/otel"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// New returns the enabled jobs as services. inv is the inventory service (zRPC); db is
// MySQL, read by the scheduled warm-up and written by the sweep; caughtUp tells the sweep
// whether the writer group has consumed everything (nil: no pipeline).
func New(c Conf, inv inventoryclient.Inventory, db sqlx.SqlConn, caughtUp CaughtUp) []service.Service {
	if !c.Enabled {
		return nil
	}
	var out []service.Service
	if c.Expiry.Enabled {
		out = append(out, newLoop("expiry", c.Expiry.Interval, NewExpiry(c.Expiry, inv).Tick))
	}
	if c.Reconcile.Enabled {
		out = append(out, newLoop("reconcile", c.Reconcile.Interval, NewReconcile(inv).Tick))
	}
	if c.Books.Enabled {
		out = append(out, newLoop("books", c.Books.Interval, NewBooks(inv).Tick))
	}
	if c.Warmup.Enabled {
		out = append(out, newLoop("warmup", c.Warmup.Interval, NewWarmup(c.Warmup, inv, db).Tick))
	}
	if c.Sweep.Enabled {
		out = append(out, newLoop("sweep", c.Sweep.Interval, NewSweep(c.Sweep, inv, db, caughtUp).Tick))
	}
	return out
}

// loop runs tick every interval until Stop. A tick that outlasts the interval delays the
// next one (time.Ticker drops missed ticks); each tick gets a deadline of
// max(interval, minTickTimeout).
type loop struct {
	name     string
	interval time.Duration
	tick     func(ctx context.Context) error

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

const minTickTimeout = 10 * time.Second

func newLoop(name string, interval time.Duration, tick func(context.Context) error) *loop {
	ctx, cancel := context.WithCancel(context.Background())
	return &loop{name: name, interval: interval, tick: tick, ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// Start runs until Stop; it blocks.
func (l *loop) Start() {
	defer close(l.done)
	logx.Infof("job %s: every %v", l.name, l.interval)
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		l.run()
		select {
		case <-l.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// run is one tick, in a root span job.<name> (sampled as a request is): its MySQL reads and
// zRPC calls are the span's children, one trace a tick, where each was a trace of its own
// (go-zero's sqlx and zRPC client start a root span for a call whose context has none).
func (l *loop) run() {
	ctx, cancel := context.WithTimeout(l.ctx, max(l.interval, minTickTimeout))
	defer cancel()
	ctx, span := otel.Tracer(ztrace.TraceName).Start(ctx, "job."+l.name,
		oteltrace.WithSpanKind(oteltrace.SpanKindInternal))
	err := l.tick(ctx)
	event.EndSpan(span, err)
	if err != nil && l.ctx.Err() == nil {
		metricErrors.WithLabelValues(l.name).Inc()
		logx.Errorf("job %s: %v", l.name, err)
	}
}

// Stop ends the loop after the running tick (whose context is cancelled).
func (l *loop) Stop() {
	l.once.Do(func() {
		l.cancel()
		<-l.done
	})
}
