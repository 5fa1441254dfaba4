package middleware

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/zeromicro/go-zero/core/logc"

	"github.com/seckill/seckill/internal/xerr"
)

var limiterFailures = promauto.NewCounterVec(prometheus.CounterOpts{
	Namespace: "seckill",
	Subsystem: "api",
	Name:      "limiter_failures_total",
	Help:      "rate limiter calls that failed (Redis unreachable), by limiter; let through when LimiterFailure is open",
}, []string{"limiter"})

// FailurePolicy is what a limiter does when its Redis fails (config LimiterFailure).
type FailurePolicy struct {
	// Closed answers 503 BUSY; otherwise the request is let through: the limiters protect
	// the service, they do not decide stock (the inventory script is the one gate).
	Closed bool
}

// Failed records a limiter failure and returns the request's outcome: nil (let through)
// or BUSY.
func (p FailurePolicy) Failed(ctx context.Context, limiter string, err error) error {
	limiterFailures.WithLabelValues(limiter).Inc()
	if p.Closed {
		logc.Errorf(ctx, "%s rate limiter unavailable, refusing (LimiterFailure: closed): %v", limiter, err)
		return xerr.ErrBusy
	}
	logc.Errorf(ctx, "%s rate limiter unavailable, allowing (LimiterFailure: open): %v", limiter, err)
	return nil
}
