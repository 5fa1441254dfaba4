package event

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// FieldTraceParent is the outbox field holding the W3C traceparent of the request that made
// the change (absent when it was not traced); the relay and the acker send it as the Kafka
// header HeaderTraceParent (docs/DESIGN.md, "Traces").
const FieldTraceParent = "tp"

// HeaderTraceParent is the Kafka message header carrying an event's trace context.
const HeaderTraceParent = "traceparent"

// AttrActivity is the span attribute naming a change's activity.
const AttrActivity = attribute.Key("seckill.activity_id")

// TraceParent is the W3C traceparent of ctx's span, "" when ctx has no valid span.
func TraceParent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c[HeaderTraceParent]
}

// SpanContextOf is the span context a W3C traceparent names (invalid for "" or garbage).
func SpanContextOf(traceParent string) trace.SpanContext {
	if traceParent == "" {
		return trace.SpanContext{}
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(),
		propagation.MapCarrier{HeaderTraceParent: traceParent})
	return trace.SpanContextFromContext(ctx)
}
