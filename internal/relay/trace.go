package relay

import (
	"context"

	ztrace "github.com/zeromicro/go-zero/core/trace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
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
	m.Headers = append(hs, kafkax.HeaderKV{Key: event.HeaderTraceParent, Value: []byte(tp)})
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

// startSpan starts a span named name under ctx's span, or, with no span in ctx, a root
// span linked to links; nil (no work) when neither ctx nor any link is traced.
func startSpan(ctx context.Context, name string, kind oteltrace.SpanKind, links []oteltrace.Link,
	attrs ...attribute.KeyValue) (context.Context, oteltrace.Span) {
	if len(links) == 0 && !oteltrace.SpanContextFromContext(ctx).IsValid() {
		return ctx, nil
	}
	return ztrace.TracerFromContext(ctx).Start(ctx, name, oteltrace.WithSpanKind(kind),
		oteltrace.WithLinks(links...), oteltrace.WithAttributes(attrs...))
}

// endSpan ends a span started by startSpan (nil: none), recording err.
func endSpan(span oteltrace.Span, err error, attrs ...attribute.KeyValue) {
	if span == nil {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.SetAttributes(attrs...)
	span.End()
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
	ctx, span := startSpan(ctx, "kafka.produce", oteltrace.SpanKindProducer, links,
		attrSystem.String("kafka"), attrTopic.String(topic), attrBatchSize.Int(len(msgs)))
	err := s.Send(ctx, msgs...)
	endSpan(span, err)
	return err
}
