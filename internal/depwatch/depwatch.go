// Package depwatch probes a service's dependencies (Redis, MySQL, Kafka) on an interval and
// exports the result as seckill_dependency_up{service, dependency}: 1 while the last probe
// succeeded, 0 after it failed. Alert rules and the dashboard read it (deploy/prometheus).
package depwatch

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/zeromicro/go-zero/core/logx"
)

var metricUp = promauto.NewGaugeVec(prometheus.GaugeOpts{
	Namespace: "seckill", Name: "dependency_up",
	Help: "1 while the last probe of a dependency succeeded, 0 after it failed.",
}, []string{"service", "dependency"})

// Conf is the `Probe` block of a service config; defaults through go-zero's loader only.
type Conf struct {
	Interval time.Duration `json:",default=5s"`
	Timeout  time.Duration `json:",default=2s"`
}

// Probe checks one dependency; nil means up.
type Probe struct {
	Dependency string
	Check      func(ctx context.Context) error
}

// Watch runs the probes every interval until Stop (a service.Service).
type Watch struct {
	c       Conf
	service string
	probes  []Probe

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// New returns a watch of the probes of one service.
func New(c Conf, service string, probes ...Probe) *Watch {
	ctx, cancel := context.WithCancel(context.Background())
	return &Watch{c: c, service: service, probes: probes, ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// Start probes until Stop; it blocks.
func (w *Watch) Start() {
	defer close(w.done)
	t := time.NewTicker(w.c.Interval)
	defer t.Stop()
	last := map[string]bool{}
	for {
		for _, p := range w.probes {
			ctx, cancel := context.WithTimeout(w.ctx, w.c.Timeout)
			err := p.Check(ctx)
			cancel()
			if w.ctx.Err() != nil {
				return
			}
			up := err == nil
			if was, seen := last[p.Dependency]; seen && was != up || !seen && !up {
				if up {
					logx.Infof("%s: %s is reachable again", w.service, p.Dependency)
				} else {
					logx.Errorf("%s: %s is down: %v", w.service, p.Dependency, err)
				}
			}
			last[p.Dependency] = up
			v := 0.0
			if up {
				v = 1
			}
			metricUp.WithLabelValues(w.service, p.Dependency).Set(v)
		}
		select {
		case <-w.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Stop stops probing and waits for the loop.
func (w *Watch) Stop() {
	w.once.Do(w.cancel)
	<-w.done
}
