package writer

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics of the writer, on the default Prometheus registry that go-zero's DevServer and
// Prometheus agent serve (promauto registers them where they are declared).
var (
	metricApplied = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "writer", Name: "events_applied_total",
		Help: "Events that changed MySQL (an order transition or a stock adjustment), by type.",
	}, []string{"type"})
	metricStale = promauto.NewCounter(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "writer", Name: "stale_events_total",
		Help: "Stale changes dropped: the activity was rebuilt into Redis (a later epoch) since they were made.",
	})
	metricDuplicates = promauto.NewCounter(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "writer", Name: "duplicates_skipped_total",
		Help: "Events that changed nothing: repeats, late events for terminal orders.",
	})
	metricDeadLetters = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "writer", Name: "dead_letters_total",
		Help: "Events sent to the dead-letter topic, by kind (malformed, rejected, forged: no valid HMAC).",
	}, []string{"kind"})
	metricBatchSize = promauto.NewHistogram(prometheus.HistogramOpts{
		Namespace: "seckill", Subsystem: "writer", Name: "batch_size",
		Help:    "Events per MySQL transaction (group commit).",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512},
	})
	metricApplySeconds = promauto.NewHistogram(prometheus.HistogramOpts{
		Namespace: "seckill", Subsystem: "writer", Name: "apply_seconds",
		Help:    "Duration of one committed MySQL transaction (a batch of events).",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	})
	metricLag = promauto.NewGauge(prometheus.GaugeOpts{
		Namespace: "seckill", Subsystem: "writer", Name: "consumer_lag_messages",
		Help: "Events on the topic the writer group has not committed yet (sum over partitions).",
	})
	metricRetries = promauto.NewCounter(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "writer", Name: "transient_retries_total",
		Help: "Transactions retried after a transient MySQL error.",
	})
	metricParked = promauto.NewGauge(prometheus.GaugeOpts{
		Namespace: "seckill", Subsystem: "writer", Name: "parked_events",
		Help: "Events MySQL rejected (underflow) waiting for the events that precede them.",
	})
)

// The known label values exist from the start (at 0), so that rate() and increase() in the
// alert rules see the first event.
func init() {
	for _, l := range []string{"malformed", "rejected", "forged"} {
		metricDeadLetters.WithLabelValues(l)
	}
}
