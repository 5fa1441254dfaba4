package relay

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
)

// Span attributes of the produce (OpenTelemetry's messaging conventions) and of the wait.
const (
	attrSystem    = attribute.Key("messaging.system")
	attrTopic     = attribute.Key("messaging.destination.name")
	attrBatchSize = attribute.Key("messaging.batch.message_count")
	attrSeq       = attribute.Key("seckill.seq")
	attrOutcome   = attribute.Key("seckill.outcome")
)

// withTraceHeader is m with the header event.HeaderTraceParent set to tp (replacing one it
// had), and tp's span context; m unchanged and an invalid context when tp names no span.
func withTraceHeader(m kafkax.Message, tp string) (kafkax.Message, oteltrace.SpanContext) {
	sc := event.SpanContextOf(tp)
	if !sc.IsValid() {
		return m, sc
	}
	hs := make([]kafkax.HeaderKV, 0, len(m.Headers)+1)
	for _, h := range m.Headers {
		if h.Key != event.HeaderTraceParent {
			hs = append(hs, h)
		}
	}
	hs = append(hs, kafkax.HeaderKV{Key: event.HeaderTraceParent, Value: []byte(tp)})
	m.Headers = hs
	return m, sc
}

// header is the value of m's header key ("" when absent).
func header(m kafkax.Message, key string) string {
	for _, h := range m.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// sendTraced is s.Send(msgs) in the span kafka.produce, linked to each message's trace.
func sendTraced(ctx context.Context, s kafkax.Sender, topic string, msgs []kafkax.Message,
	traces []oteltrace.SpanContext) error {
	var links []oteltrace.Link
	for _, sc := range traces {
		if sc.IsValid() {
			links = append(links, oteltrace.Link{SpanContext: sc})
		}
	}
	ctx, span := event.StartSpan(ctx, "kafka.produce", oteltrace.SpanKindProducer, links,
		attrSystem.String("kafka"), attrTopic.String(topic), attrBatchSize.Int(len(msgs)))
	err := s.Send(ctx, msgs...)
	event.EndSpan(span, err)
	return err
}
