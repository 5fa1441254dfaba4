package event

import (
	"context"

	ztrace "github.com/zeromicro/go-zero/core/trace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
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

// StartSpan starts a span named name under ctx's span, or, with no span in ctx, a root
// span linked to links; nil (no work) when neither ctx nor any link is traced.
func StartSpan(ctx context.Context, name string, kind trace.SpanKind, links []trace.Link,
	attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if len(links) == 0 && !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, nil
	}
	return ztrace.TracerFromContext(ctx).Start(ctx, name, trace.WithSpanKind(kind),
		trace.WithLinks(links...), trace.WithAttributes(attrs...))
}

// EndSpan ends a span started by StartSpan (nil: none), recording err.
func EndSpan(span trace.Span, err error, attrs ...attribute.KeyValue) {
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
