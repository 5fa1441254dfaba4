package jobs

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Status values of the reconciliation gauge.
const (
	gaugeConsistent = 0
	gaugeInFlight   = 1
	gaugeMismatch   = 2
)

// Metrics of the jobs, on the default Prometheus registry that go-zero's DevServer and
// Prometheus agent serve (promauto registers them where they are declared).
var (
	metricExpired = promauto.NewCounter(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "jobs", Name: "orders_expired_total",
		Help: "Unpaid orders the expiry job released (stock back in remaining).",
	})
	metricSwept = promauto.NewCounter(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "jobs", Name: "orders_swept_total",
		Help: "Reserved orders the sweep expired in MySQL because their Redis keys were gone.",
	})
	metricWarmed = promauto.NewCounter(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "jobs", Name: "activities_warmed_total",
		Help: "Activities the scheduled warm-up loaded into Redis (created, not already warm).",
	})
	metricReconcileStatus = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "seckill", Subsystem: "reconcile", Name: "status",
		Help: "Last reconciliation of an activity: 0 consistent, 1 in_flight, 2 mismatch.",
	}, []string{"activity"})
	metricDrift = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "seckill", Subsystem: "reconcile", Name: "drift_units",
		Help: "Sum of |redis - mysql| over remaining/available, locked and sold at the last run.",
	}, []string{"activity"})
	metricInFlight = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "seckill", Subsystem: "reconcile", Name: "in_flight_events",
		Help: "Events not yet applied to MySQL at the last run (outbox, or not yet seen long enough to call lost).",
	}, []string{"activity"})
	metricRedisBook = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "seckill", Subsystem: "stock", Name: "redis_units",
		Help: "An activity's Redis book (the front line): remaining, locked, sold. Absent while not warm.",
	}, []string{"activity", "field"})
	metricMySQLBook = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "seckill", Subsystem: "stock", Name: "mysql_units",
		Help: "An activity's MySQL book (the book of record): available, locked, sold.",
	}, []string{"activity", "field"})
	metricErrors = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "jobs", Name: "errors_total",
		Help: "Failed job steps, by task (expiry, reconcile, warmup, books, sweep): not `job`, Prometheus's target label.",
	}, []string{"task"})
)

// perActivity are the vectors labelled by activity; retire deletes an activity's series
// from all of them.
var perActivity = []*prometheus.GaugeVec{metricReconcileStatus, metricDrift, metricInFlight,
	metricRedisBook, metricMySQLBook}

// series remembers the activities that have per-activity series, so that the jobs delete
// them once an activity drops out of ListActive (end + grace passed): labels stay bounded.
var series = struct {
	sync.Mutex
	known map[string]struct{}
}{known: map[string]struct{}{}}

func track(label string) {
	series.Lock()
	series.known[label] = struct{}{}
	series.Unlock()
}

// retireExcept deletes the per-activity series of every tracked activity not in active.
func retireExcept(active []int64) {
	keep := make(map[string]bool, len(active))
	for _, aid := range active {
		keep[strconv.FormatInt(aid, 10)] = true
	}
	series.Lock()
	defer series.Unlock()
	for label := range series.known {
		if keep[label] {
			continue
		}
		for _, v := range perActivity {
			v.DeletePartialMatch(prometheus.Labels{"activity": label})
		}
		delete(series.known, label)
	}
}

// The known label values exist from the start (at 0), so that rate() and increase() in the
// alert rules see the first event.
func init() {
	for _, l := range []string{"expiry", "reconcile", "warmup", "books", "sweep"} {
		metricErrors.WithLabelValues(l)
	}
}
