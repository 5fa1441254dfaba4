package relay

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics of the relay, on the default Prometheus registry that go-zero's DevServer and
// Prometheus agent serve (promauto registers them where they are declared). Per-activity
// series are deleted when the relay retires the activity, so labels stay bounded.
var (
	metricOutboxLength = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "seckill", Subsystem: "relay", Name: "outbox_length",
		Help: "Entries in an activity's outbox stream not yet relayed to Kafka.",
	}, []string{"activity"})
	metricLag = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "seckill", Subsystem: "relay", Name: "lag_seconds",
		Help: "Age of the oldest unrelayed outbox entry (0 when the outbox is empty).",
	}, []string{"activity"})
	metricRelayed = promauto.NewCounter(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "relay", Name: "events_total",
		Help: "Outbox entries Kafka acknowledged (acks=all) and the relay removed.",
	})
	acksBatched = promauto.NewHistogram(prometheus.HistogramOpts{
		Namespace: "seckill", Subsystem: "relay", Name: "acks_per_check",
		Help:    "Acknowledgements checked (epoch) and deleted from the outbox by one Redis call.",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256},
	})
	metricProducedByAcker = promauto.NewCounter(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "relay", Name: "acker_produced_total",
		Help: "Outbox entries the relay did not produce because the inventory service's Acker had produced them " +
			"(Acknowledge kafka).",
	})
	metricReclaimed = promauto.NewCounter(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "relay", Name: "reclaimed_total",
		Help: "Outbox entries taken over from a relay that stopped (XAUTOCLAIM).",
	})
	metricDeadLetters = promauto.NewCounter(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "relay", Name: "dead_letters_total",
		Help: "Unparsable outbox entries sent to the dead-letter topic.",
	})
	metricAcks = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "relay", Name: "acks_total",
		Help: "Changes held until their event was in Kafka (Acker), by outcome: acknowledged, " +
			"kafka_failed, book_replaced, check_failed (the last three answered BUSY).",
	}, []string{"outcome"})
	metricErrors = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "relay", Name: "errors_total",
		Help: "Failed relay steps, by step (read, produce, ack, claim, refresh).",
	}, []string{"step"})
)

// The known label values exist from the start (at 0), so that rate() and increase() in the
// alert rules see the first event.
func init() {
	for _, l := range []string{"read", "produce", "ack", "claim", "refresh"} {
		metricErrors.WithLabelValues(l)
	}

}

// The acker's outcomes, bound once (one per acknowledged change: no label lookup on the
// hot path); they exist at 0 from the start.
var (
	acksAcknowledged = metricAcks.WithLabelValues("acknowledged")
	acksKafkaFailed  = metricAcks.WithLabelValues("kafka_failed")
	acksBookReplaced = metricAcks.WithLabelValues("book_replaced")
	acksCheckFailed  = metricAcks.WithLabelValues("check_failed")
	acksRolledBack   = metricAcks.WithLabelValues("rolled_back")
)
