package consumer

import (
	"context"
	"strconv"

	"github.com/segmentio/kafka-go"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/event"
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
		semconv.MessagingSystemKafka, semconv.MessagingDestinationName(msg.Topic),
		semconv.MessagingConsumerGroupName(m.group),
		semconv.MessagingDestinationPartitionID(strconv.Itoa(msg.Partition)),
		semconv.MessagingKafkaOffset(int(msg.Offset)), semconv.MessagingOperationTypeProcess)
	return ctx, func(err error) {
		event.EndSpan(span, err)
		done(err)
	}
}
