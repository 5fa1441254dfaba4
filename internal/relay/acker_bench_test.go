package relay

import (
	"testing"

	red "github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/event"
)

// BenchmarkToItem is the Acker's (and the relay's) work on the entry of a reserve call of 32
// items: its events read, encoded and keyed, the traceparent as a header.
func BenchmarkToItem(b *testing.B) {
	m := red.XMessage{ID: "1700000000123-0", Values: map[string]any{event.FieldEntry: stocktest.PackedBatch(b, 12, 32)}}
	b.ReportAllocs()
	for b.Loop() {
		if it := toItem("sk:events:12", m); it.dead || len(it.msgs) != 32 {
			b.Fatal(it)
		}
	}
}
