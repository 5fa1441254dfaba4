package domain

import "testing"

// BenchmarkNewOrderNo is the numbering of every reserved order (Store.ReserveBatch).
func BenchmarkNewOrderNo(b *testing.B) {
	key := []byte("0123456789abcdef0123456789abcdef")
	b.ReportAllocs()
	for b.Loop() {
		_ = NewOrderNo(12, key)
	}
}
