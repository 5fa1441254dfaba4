package stocktest

import (
	"fmt"
	"testing"

	"github.com/seckill/seckill/internal/event"
)

// TraceParent is the traceparent PackedBatch's entries carry.
const TraceParent = "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01"

// PackedBatch is the outbox entry (the value of event.FieldEntry) of a reserve call of n items
// of activity aid, as reserve.lua writes it: epoch 2, change count 41, TraceParent.
func PackedBatch(tb testing.TB, aid int64, n int) string {
	tb.Helper()
	es := make([]event.Event, n)
	for i := range es {
		es[i] = event.Event{Type: event.Reserved, ActivityID: aid, SkuID: 7, OrderNo: fmt.Sprintf("%d-%020d", aid, i),
			UID: int64(1000 + i), Quantity: int64(1 + i%3), AtMs: 1700000000123, RequestID: fmt.Sprintf("req-%08d", i),
			ExpireMs: 1700000900123, Epoch: 2}
	}
	packed, err := event.PackBatch(es, 41, TraceParent)
	if err != nil {
		tb.Fatal(err)
	}
	return packed
}
