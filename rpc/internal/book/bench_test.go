package book_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/domain"
)

// BenchmarkReserveBatch runs each book's ReserveBatch on real Redis and MariaDB: one op is one
// batch of size items, each a new buyer, from 2×GOMAXPROCS senders at once (the MySQL book's
// transactions queue on the activity's inventory row lock, as in a sale); reservations/s is the
// per-reservation rate, the figure to compare between the books and the batch sizes.
func BenchmarkReserveBatch(b *testing.B) {
	for _, im := range impls(b) {
		for _, size := range []int{1, 32, 128} {
			b.Run(fmt.Sprintf("%s/batch=%d", im.name, size), func(b *testing.B) {
				aid := im.place(b, sale{1_000_000_000, 1, 600, time.Now().Add(-time.Hour), time.Now().Add(time.Hour), 0})
				var next atomic.Int64 // buyers, one per item
				b.SetParallelism(2)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					items := make([]domain.ReserveItem, size)
					for pb.Next() {
						for i := range items {
							uid := next.Add(1)
							items[i] = domain.ReserveItem{UID: uid, Qty: 1, RequestID: rid(int(uid))}
						}
						out, err := im.book.ReserveBatch(ctx, aid, items)
						if err != nil {
							b.Error(err)
							return
						}
						for _, r := range out {
							if r.Err != nil {
								b.Error(r.Err)
								return
							}
						}
					}
				})
				b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "reservations/s")
			})
		}
	}
}
