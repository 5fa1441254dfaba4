package stock

import (
	"context"

	ztrace "github.com/zeromicro/go-zero/core/trace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/event"
)

// attrCode is the span attribute holding a script's result code.
const attrCode = attribute.Key("seckill.code")

// startScript starts the span stock.<script> of one script run, nil when ctx has no
// valid span (tracing off, or a caller outside any trace).
func startScript(ctx context.Context, sc *script, aid int64) (context.Context, oteltrace.Span) {
	if !oteltrace.SpanContextFromContext(ctx).IsValid() {
		return ctx, nil
	}
	ctx, span := ztrace.TracerFromContext(ctx).Start(ctx, "stock."+sc.name,
		oteltrace.WithAttributes(event.AttrActivity.Int64(aid)))
	return ctx, span
}

// endScript ends a script's span with its result code or error.
func endScript(span oteltrace.Span, code int64, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.SetAttributes(attrCode.Int64(code))
	span.End()
}
