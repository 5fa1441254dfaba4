package event

import (
	"context"

	ztrace "github.com/zeromicro/go-zero/core/trace"
	"go.opentelemetry.io/otel"
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

// Sampled reports whether ctx's span is sampled: only then does the system build a span,
// an attribute or a traceparent (a span not sampled is never exported, and the services'
// samplers follow their caller's decision; docs/DESIGN.md, "Traces").
func Sampled(ctx context.Context) bool { return trace.SpanContextFromContext(ctx).IsSampled() }

// TraceParent is the W3C traceparent of ctx's span, "" when ctx has no sampled span.
func TraceParent(ctx context.Context) string {
	if !Sampled(ctx) {
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

// untraced is a span context that is valid and never sampled (its ids are no request's).
var untraced = trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}})

// Untraced is ctx when it carries a span, sampled or not; else ctx under untraced, so that
// the calls made with it outside any request start no trace of their own. go-zero's Redis
// hook and sqlx start a span for every call through the tracer of ctx's span, or, with no
// span in ctx, through the process's provider: a root span, which the sampler keeps at
// Sampler like a request's, an exported trace of one call that belongs to no request.
// Under untraced they get the no-op tracer. Only for calls that carry no trace context on
// (Redis, MySQL): a propagator would send untraced's ids.
func Untraced(ctx context.Context) context.Context {
	if trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	return trace.ContextWithSpanContext(ctx, untraced)
}

// StartSpan starts a span named name under ctx's span, or, with no span in ctx (or under
// Untraced), a root span linked to links; nil (no work) when ctx holds no sampled span and
// there is no link (callers pass only sampled ones).
func StartSpan(ctx context.Context, name string, kind trace.SpanKind, links []trace.Link,
	attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if len(links) == 0 && !Sampled(ctx) {
		return ctx, nil
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(kind), trace.WithLinks(links...), trace.WithAttributes(attrs...)}
	if trace.SpanContextFromContext(ctx).Equal(untraced) {
		opts = append(opts, trace.WithNewRoot()) // a child of untraced would never be sampled
	}
	return tracer(ctx).Start(ctx, name, opts...)
}

// tracer is the tracer of ctx's span when it records, else the process's (go-zero's
// provider): a remote parent (a Kafka message's traceparent) has a no-op provider, through
// which go-zero's TracerFromContext would start no span at all.
func tracer(ctx context.Context) trace.Tracer {
	if s := trace.SpanFromContext(ctx); s.IsRecording() {
		return s.TracerProvider().Tracer(ztrace.TraceName)
	}
	return otel.Tracer(ztrace.TraceName)
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
