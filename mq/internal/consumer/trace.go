package consumer

import (
	"context"
	"strconv"

	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/attribute"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/event"
)

// Span attributes of the consume span (OpenTelemetry's messaging conventions).
const (
	attrSystem    = attribute.Key("messaging.system")
	attrTopic     = attribute.Key("messaging.destination.name")
	attrGroup     = attribute.Key("messaging.consumer.group.name")
	attrPartition = attribute.Key("messaging.destination.partition.id")
	attrOffset    = attribute.Key("messaging.kafka.offset")
	attrOperation = attribute.Key("messaging.operation.type")
)

// traceContext is a context holding the trace context of msg's traceparent header, as a
// remote parent (none when the header is absent or invalid).
func traceContext(msg kafka.Message) context.Context {
	ctx := context.Background()
	for _, h := range msg.Headers {
		if h.Key == event.HeaderTraceParent {
			if sc := event.SpanContextOf(string(h.Value)); sc.IsValid() {
				return oteltrace.ContextWithRemoteSpanContext(ctx, sc)
			}
		}
	}
	return ctx
}

// consume is the context a message is handed to the handler with and done wrapped: for a
// message whose traceparent is sampled, the span kafka.consume (kind consumer) is its
// child, from the hand-over until done (the event durable in MySQL, or not), and the
// handler's work continues under it. Otherwise ctx holds the header's context, if any, and
// done is unchanged: no span, no attribute.
func (m *member) consume(msg kafka.Message, done func(error)) (context.Context, func(error)) {
	ctx := traceContext(msg)
	if !event.Sampled(ctx) {
		return ctx, done
	}
	ctx, span := event.StartSpan(ctx, "kafka.consume", oteltrace.SpanKindConsumer, nil,
		attrSystem.String("kafka"), attrTopic.String(msg.Topic), attrGroup.String(m.group),
		attrPartition.String(strconv.Itoa(msg.Partition)), attrOffset.Int64(msg.Offset),
		attrOperation.String("process"))
	return ctx, func(err error) {
		event.EndSpan(span, err)
		done(err)
	}
}
