package domain_test

import (
	"testing"

	"github.com/seckill/seckill/internal/domain"
)

// BenchmarkDrawOrder100k: the draw's order of 100,000 entries (an HMAC each, then the sort).
func BenchmarkDrawOrder100k(b *testing.B) {
	entries := make([]domain.DrawEntry, 100_000)
	for i := range entries {
		entries[i] = domain.DrawEntry{UID: int64(i + 1), Qty: 1}
	}
	seed := make([]byte, 32)
	for b.Loop() {
		domain.DrawOrder(entries, seed)
	}
}
