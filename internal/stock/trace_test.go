package stock_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/stock"
)

// A traced call's outbox entry carries the caller's traceparent (field tp, and the entry the
// call returns for its acknowledgement); an untraced call's carries none.
func TestOutboxEntryCarriesTheCallersTrace(t *testing.T) {
	e := stocktest.New(t, stock.WithEntries())
	aid := warmUnchecked(t, e, 10)
	var acked []stock.Entry
	reserve := func(ctx context.Context, uid int64) (domain.Reservation, error) {
		res, err := e.Store.ReserveBatch(ctx, aid, []domain.ReserveItem{{UID: uid, Qty: 1, RequestID: reqID(int(uid))}},
			time.Time{})
		if err != nil {
			return domain.Reservation{}, err
		}
		acked = append(acked, stock.EntriesOf(res[0])...)
		return res[0].Reservation, res[0].Err
	}
	traced := tracedCtx(9)
	want := event.TraceParent(traced)

	r, err := reserve(traced, 1)
	if err != nil {
		t.Fatal(err)
	}
	es, err := e.Store.Confirm(traced, r.OrderNo, 1)
	if err != nil {
		t.Fatal(err)
	}
	acked = append(acked, es...)
	if _, err := reserve(ctx, 2); err != nil {
		t.Fatal(err)
	}
	entries, err := e.Store.Outbox().Entries(ctx, aid, "-", "+", 10)
	if err != nil || len(entries) != 3 || len(acked) != 3 {
		t.Fatalf("%d entries, %d acknowledged, %v; want 3", len(entries), len(acked), err)
	}
	for i, wantTP := range []string{want, want, ""} {
		as, err := event.EntryAttributes(entries[i].Values)
		if err != nil {
			t.Fatal(err)
		}
		ack, err := event.EntryAttributes(acked[i].Values)
		if err != nil {
			t.Fatal(err)
		}
		if got := as[0][event.FieldTraceParent]; got != wantTP || ack[0][event.FieldTraceParent] != wantTP {
			t.Errorf("entry %d: tp %q, acknowledged with %q; want %q", i, got, ack[0][event.FieldTraceParent], wantTP)
		}
	}
}

// tracedCtx is ctx in a sampled span of trace id {id} (span id {id - 1}).
func tracedCtx(id byte) context.Context {
	return trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{id},
		SpanID: trace.SpanID{id - 1}, TraceFlags: trace.FlagsSampled}))
}
