package relay

import (
	"fmt"
	"testing"

	red "github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/event"
)

// BenchmarkToItem is the Acker's (and the relay's) work on the entry of a reserve call of 32
// items: its events read, encoded and keyed, the traceparent as a header.
func BenchmarkToItem(b *testing.B) {
	es := make([]event.Event, 32)
	for i := range es {
		es[i] = event.Event{Type: event.Reserved, ActivityID: 12, SkuID: 7, OrderNo: fmt.Sprintf("12-%020d", i),
			UID: int64(1000 + i), Quantity: 1, AtMs: 1700000000123, RequestID: fmt.Sprintf("req-%08d", i),
			ExpireMs: 1700000900123, Epoch: 2}
	}
	packed, err := event.PackBatch(es, 41, "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01")
	if err != nil {
		b.Fatal(err)
	}
	m := red.XMessage{ID: "1700000000123-0", Values: map[string]any{event.FieldEntry: packed}}
	b.ReportAllocs()
	for b.Loop() {
		if it := toItem("sk:events:12", m); it.dead || len(it.msgs) != len(es) {
			b.Fatal(it)
		}
	}
}
