package writer

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/event"
)

// attrEvents is the span attribute holding how many events a transaction applies.
const attrEvents = attribute.Key("seckill.events")

// startApply starts the span writer.apply of a batch's transaction, a root span linked to
// the trace of each event in the batch; nil (no work) when no event is traced.
func startApply(ctx context.Context, batch []*request) (context.Context, oteltrace.Span) {
	var links []oteltrace.Link
	for _, r := range batch {
		if r.trace.IsValid() {
			links = append(links, oteltrace.Link{SpanContext: r.trace})
		}
	}
	return event.StartSpan(ctx, "writer.apply", oteltrace.SpanKindInternal, links, attrEvents.Int(len(batch)))
}
