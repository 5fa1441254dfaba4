package relay

import "github.com/prometheus/client_golang/prometheus"

// Prometheus metrics of the relay, registered once per process (go-zero's DevServer /
// Prometheus agent serves the default registry).
var (
	metricOutboxLength = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "seckill", Subsystem: "relay", Name: "outbox_length",
		Help: "Entries in an activity's outbox stream not yet relayed to Kafka.",
	}, []string{"activity"})
	metricLag = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "seckill", Subsystem: "relay", Name: "lag_seconds",
		Help: "Age of the oldest unrelayed outbox entry (0 when the outbox is empty).",
	}, []string{"activity"})
	metricRelayed = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "relay", Name: "events_total",
		Help: "Outbox entries Kafka acknowledged (acks=all) and the relay removed.",
	})
	metricReclaimed = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "relay", Name: "reclaimed_total",
		Help: "Outbox entries taken over from a relay that stopped (XAUTOCLAIM).",
	})
	metricDeadLetters = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "relay", Name: "dead_letters_total",
		Help: "Unparsable outbox entries sent to the dead-letter topic.",
	})
	metricErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "relay", Name: "errors_total",
		Help: "Failed relay steps, by step (read, produce, ack, claim, refresh).",
	}, []string{"step"})
)

func init() {
	prometheus.MustRegister(metricOutboxLength, metricLag, metricRelayed, metricReclaimed,
		metricDeadLetters, metricErrors)
}
