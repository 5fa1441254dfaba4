package stock

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/event"
)

// attrCode is the span attribute holding a script's result code.
const attrCode = attribute.Key("seckill.code")

// startScript starts the span stock.<script> of one script run under ctx's span; nil (no
// work) when ctx has none that is sampled (tracing off, a caller outside any trace, or one
// its sampler left out).
func startScript(ctx context.Context, sc *script, aid int64) (context.Context, oteltrace.Span) {
	if !event.Sampled(ctx) {
		return ctx, nil // before the attribute: the untraced path allocates nothing
	}
	return event.StartSpan(ctx, "stock."+sc.name, oteltrace.SpanKindInternal, nil, event.AttrActivity.Int64(aid))
}

// endScript ends a script's span (nil: none) with its result code or error.
func endScript(span oteltrace.Span, code int64, err error) {
	if span != nil { // before the attribute: the untraced path allocates nothing
		event.EndSpan(span, err, attrCode.Int64(code))
	}
}
