package stock_test

import (
	"testing"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/stock"
)

// BenchmarkNewEntry is what the store does with the entry of a reserve call of 32 items.
func BenchmarkNewEntry(b *testing.B) {
	packed := stocktest.PackedBatch(b, 12, 32)
	b.ReportAllocs()
	for b.Loop() {
		if e, err := stock.NewEntry(12, "1700000000123-0", packed); err != nil || e.Seq != 41 || e.Epoch != 2 {
			b.Fatal(e, err)
		}
	}
}
