package reconcile_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/reconcile"
)

// BenchmarkRun10kOrders: one reconciliation of an activity with 10,000 orders (half paid),
// MySQL mirrored, outbox empty. The Redis part is one MULTI and HSCANs of the orders hash.
func BenchmarkRun10kOrders(b *testing.B) {
	const n = 10000
	env := stocktest.New(b)
	db := testenv.MySQL(b)
	aid := env.Warm(stocktest.Spec{Total: n, Limit: 1})
	var rows []string
	var args []any
	for uid := int64(1); uid <= n; uid++ {
		r, err := stocktest.Reserve(ctx, env.Store, aid, uid, 1, fmt.Sprintf("bench-req-%d", uid))
		if err != nil {
			b.Fatal(err)
		}
		st := "reserved"
		if uid%2 == 0 {
			if _, err := env.Store.Confirm(ctx, r.OrderNo, uid); err != nil {
				b.Fatal(err)
			}
			st = "paid"
		}
		rows = append(rows, "(?, ?, ?, ?, 1, ?)")
		args = append(args, r.OrderNo, fmt.Sprintf("bench-req-%d", uid), aid, uid, st)
	}
	s, _ := env.Store.Stock(ctx, aid)
	mustExec(b, db,
		"INSERT INTO `activity` (`id`, `sku_id`, `name`, `total`, `start_time`, `end_time`) VALUES (?, 7, 'b', ?, ?, ?)",
		aid, s.Total, s.Start, s.End)
	mustExec(b, db, "INSERT INTO `inventory` (`activity_id`, `available`, `locked`, `sold`) VALUES (?, ?, ?, ?)",
		aid, s.Remaining, s.Locked, s.Sold)
	for i := 0; i < len(rows); i += 1000 {
		mustExec(b, db,
			"INSERT INTO `seckill_order` (`order_no`, `request_id`, `activity_id`, `uid`, `quantity`, `status`) VALUES "+
				strings.Join(rows[i:i+1000], ", "), args[i*5:(i+1000)*5]...)
	}
	_, _ = env.Redis.DelCtx(ctx, env.Keys.Events(aid))
	rec := reconcile.New(recConf(b, time.Hour), env.Store, env.Redis, env.Keys.Prefix, db.Conn)
	b.ResetTimer()
	for b.Loop() {
		r, err := rec.Run(ctx, aid)
		if err != nil || r.Status != reconcile.Consistent {
			b.Fatalf("%+v %v", r.Status, err)
		}
	}
}

func mustExec(b *testing.B, db *testenv.Database, q string, args ...any) {
	b.Helper()
	if _, err := db.DB.Exec(q, args...); err != nil {
		b.Fatal(err)
	}
}
