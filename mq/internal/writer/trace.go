package writer

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/event"
)

// attrEvents is the span attribute holding how many events a transaction applies.
const attrEvents = attribute.Key("seckill.events")

// startApply starts the span writer.apply of a batch's transaction: the child of the first
// sampled event's span (its kafka.consume, which the consumer started), linked to the
// others' (a batch holds the events of many requests, as a coalesced zRPC call does); nil
// (no work) when no event is sampled, and ctx then event.Untraced: the requests were not
// sampled, and go-zero's sql spans would otherwise be roots, traces of no request. go-zero's
// sql spans are the span's children.
func startApply(ctx context.Context, batch []*request) (context.Context, oteltrace.Span) {
	var parent oteltrace.SpanContext
	var links []oteltrace.Link
	for _, r := range batch {
		switch {
		case !r.trace.IsSampled():
		case !parent.IsValid():
			parent = r.trace
		default:
			links = append(links, oteltrace.Link{SpanContext: r.trace})
		}
	}
	if !parent.IsValid() {
		return event.Untraced(ctx), nil
	}
	ctx = oteltrace.ContextWithSpanContext(ctx, parent)
	return event.StartSpan(ctx, "writer.apply", oteltrace.SpanKindInternal, links, attrEvents.Int(len(batch)))
}
