package book_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/book"
)

// BenchmarkMySQLReserveBatch is the MySQL book (degrade mode) on real MariaDB: one op is one
// ReserveBatch of size items, each a new buyer, from 2×GOMAXPROCS senders at once (the
// transactions queue on the activity's inventory row lock, as in a sale); reservations/s is the
// per-reservation rate.
func BenchmarkMySQLReserveBatch(b *testing.B) {
	db := testenv.MySQL(b)
	rds, keys := testenv.Redis(b)
	store := stock.NewStore(rds, keys)
	conn := book.Conn(db.DSN)
	mysql := &book.MySQL{DB: conn, Inventory: model.NewInventoryModel(conn),
		Orders: model.NewSeckillOrderModel(conn), Activities: model.NewActivityModel(conn), Store: store,
		Concurrency: 64}
	for _, size := range []int{1, 32, 128} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			res, err := db.DB.Exec("INSERT INTO activity (sku_id, name, total, start_time, end_time, per_user_limit) "+
				"VALUES (7, 'kettle', 1000000000, 0, ?, 1)", time.Now().Add(time.Hour).Unix())
			if err != nil {
				b.Fatal(err)
			}
			aid, _ := res.LastInsertId()
			if _, err := db.DB.Exec("INSERT INTO inventory (activity_id, available, mode) VALUES (?, 1000000000, ?)",
				aid, model.ModeMySQL); err != nil {
				b.Fatal(err)
			}
			var next atomic.Int64 // buyers, one per item
			b.SetParallelism(2)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				items := make([]stock.ReserveItem, size)
				for pb.Next() {
					for i := range items {
						uid := next.Add(1)
						items[i] = stock.ReserveItem{UID: uid, Qty: 1, RequestID: rid(int(uid))}
					}
					out, err := mysql.ReserveBatch(ctx, aid, items)
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
