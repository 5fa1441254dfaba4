package stock

import (
	"fmt"
	"testing"

	"github.com/seckill/seckill/internal/event"
)

// batchEntry is the packed entry of a reservation batch of n events, as reserve.lua writes it.
func batchEntry(tb testing.TB, n int) string {
	tb.Helper()
	es := make([]event.Event, n)
	for i := range es {
		es[i] = event.Event{Type: event.Reserved, ActivityID: 12, SkuID: 7, OrderNo: fmt.Sprintf("12-%020d", i),
			UID: int64(1000 + i), Quantity: 1, AtMs: 1700000000123, RequestID: fmt.Sprintf("req-%08d", i),
			ExpireMs: 1700000900123, Epoch: 2}
	}
	packed, err := event.PackBatch(es, 41, "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01")
	if err != nil {
		tb.Fatal(err)
	}
	return packed
}

// BenchmarkNewEntry is what the store does with the entry of a reserve call of 32 items.
func BenchmarkNewEntry(b *testing.B) {
	packed := batchEntry(b, 32)
	b.ReportAllocs()
	for b.Loop() {
		if e, err := newEntry(12, "1700000000123-0", packed); err != nil || e.Seq != 41 || e.Epoch != 2 {
			b.Fatal(e, err)
		}
	}
}
