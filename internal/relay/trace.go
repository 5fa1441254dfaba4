package relay

import (
	"context"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
)

// Span attributes of the wait (the produce's are OpenTelemetry's messaging conventions, semconv).
const (
	attrSeq     = attribute.Key("seckill.seq")
	attrOutcome = attribute.Key("seckill.outcome")
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

// sendTraced is s.Send(msgs) in the span kafka.produce (kind producer), linked to each
// message's trace. A message of the span's own trace (the Acker's, under the request's
// relay.ack_wait) carries the produce span as its traceparent, so that the writer's
// consume span is its child; the others (the relay's, whose span is a root of its own)
// keep their request's. Not sampled: no span, the messages as they are.
func sendTraced(ctx context.Context, s kafkax.Sender, topic string, msgs []kafkax.Message,
	traces []oteltrace.SpanContext) error {
	var links []oteltrace.Link
	for _, sc := range traces {
		if sc.IsSampled() {
			links = append(links, oteltrace.Link{SpanContext: sc})
		}
	}
	ctx, span := event.StartSpan(ctx, "kafka.produce", oteltrace.SpanKindProducer, links,
		semconv.MessagingSystemKafka, semconv.MessagingDestinationName(topic), semconv.MessagingOperationTypeSend,
		semconv.MessagingBatchMessageCount(len(msgs)))
	if span != nil {
		msgs = underSpan(msgs, traces, span.SpanContext())
	}
	err := s.Send(ctx, msgs...)
	event.EndSpan(span, err)
	return err
}

// underSpan is msgs with the traceparent of each message of produce's trace set to produce
// (a new slice and new headers for those: the callers' messages are not changed).
func underSpan(msgs []kafkax.Message, traces []oteltrace.SpanContext, produce oteltrace.SpanContext) []kafkax.Message {
	if !produce.IsSampled() {
		return msgs
	}
	var out []kafkax.Message
	var tp string
	for i, sc := range traces {
		if sc.TraceID() != produce.TraceID() {
			continue
		}
		if out == nil {
			out = slices.Clone(msgs)
			tp = event.TraceParent(oteltrace.ContextWithSpanContext(context.Background(), produce))
		}
		out[i], _ = withTraceHeader(msgs[i], tp)
	}
	if out == nil {
		return msgs
	}
	return out
}
