package reply

import (
	"context"

	"github.com/seckill/seckill/internal/xerr"
)

// An Outcome records the error a request was answered with by ErrorHandler (nil: none).
type Outcome struct {
	Err *xerr.Error
}

type outcomeKey struct{}

// WithOutcome returns ctx under which ErrorHandler records its answer in o.
func WithOutcome(ctx context.Context, o *Outcome) context.Context {
	return context.WithValue(ctx, outcomeKey{}, o)
}

// record stores e in ctx's Outcome, if any.
func record(ctx context.Context, e *xerr.Error) {
	if o, ok := ctx.Value(outcomeKey{}).(*Outcome); ok {
		o.Err = e
	}
}
