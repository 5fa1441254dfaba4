package jobs

import (
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
	metricErrors = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "jobs", Name: "errors_total",
		Help: "Failed job steps, by job (expiry, reconcile, warmup).",
	}, []string{"job"})
)
