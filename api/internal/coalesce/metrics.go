package coalesce

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics of the coalescer on the default Prometheus registry (docs/DESIGN.md "Metrics"); no
// per-activity labels.
var (
	metricBatchSize = promauto.NewHistogram(prometheus.HistogramOpts{
		Namespace: "seckill", Subsystem: "api", Name: "reserve_batch_size",
		Help:    "Reservations sent in one ReserveBatch call.",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512},
	})
	metricQueueWait = promauto.NewHistogram(prometheus.HistogramOpts{
		Namespace: "seckill", Subsystem: "api", Name: "reserve_queue_wait_seconds",
		Help:    "Time a reservation waited in its activity's queue before it was sent.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
	})
	metricExpired = promauto.NewCounter(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "api", Name: "reserve_queue_expired_total",
		Help: "Reservations answered BUSY, never sent, because their deadline passed while queued.",
	})
)
