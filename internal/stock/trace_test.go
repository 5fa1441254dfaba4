package stock_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/stock"
)

// A traced call's outbox entry carries the caller's traceparent (field tp, and the entry the
// ack hook is given); an untraced call's carries none.
func TestOutboxEntryCarriesTheCallersTrace(t *testing.T) {
	e := stocktest.New(t)
	aid := warmUnchecked(t, e, 10)
	var acked []stock.Entry
	e.Store.Outbox().SetAck(func(_ context.Context, en stock.Entry) error { acked = append(acked, en); return nil })
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{9}, SpanID: trace.SpanID{8},
		TraceFlags: trace.FlagsSampled})
	traced := trace.ContextWithSpanContext(ctx, sc)
	want := event.TraceParent(traced)

	r, err := e.Store.Reserve(traced, aid, 1, 1, reqID(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store.Confirm(traced, r.OrderNo, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.Reserve(ctx, aid, 2, 1, reqID(2)); err != nil {
		t.Fatal(err)
	}
	entries, err := e.Store.Outbox().Entries(ctx, aid, "-", "+", 10)
	if err != nil || len(entries) != 3 || len(acked) != 3 {
		t.Fatalf("%d entries, %d acknowledged, %v; want 3", len(entries), len(acked), err)
	}
	for i, wantTP := range []string{want, want, ""} {
		a, err := event.Attributes(entries[i].Values)
		if err != nil {
			t.Fatal(err)
		}
		got := a[event.FieldTraceParent]
		if got != wantTP || acked[i].TraceParent != wantTP {
			t.Errorf("entry %d: tp %q, acknowledged with %q; want %q", i, got, acked[i].TraceParent, wantTP)
		}
	}
}
