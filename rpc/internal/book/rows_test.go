package book_test

import (
	"database/sql"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/book"
)

// TestMySQLBatchReadsOnlyItsBuyersRows: a batch of the MySQL book reads its requests' orders and
// its buyers' holdings through the key (activity, uid, request id), a few index reads per item,
// whatever the table's statistics say; the activity's other orders are never read. Degrade mode
// starts on a table the Redis path filled through the writer, whose statistics InnoDB recounts in
// the background at most every 10 s: until then they say what the table held before (here: empty,
// never recounted). With such statistics MariaDB looked both up by activity_id alone and read
// every order of the activity, under the inventory row's lock (make bench's degrade row: about
// 1,600 reservations/s when the recount came late, 4,400 and more when it came first).
func TestMySQLBatchReadsOnlyItsBuyersRows(t *testing.T) {
	db := testenv.MySQL(t)
	for _, q := range []string{"ALTER TABLE seckill_order STATS_AUTO_RECALC = 0", "ANALYZE TABLE seckill_order"} {
		if _, err := db.DB.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	const others, n = 5000, 64
	aid := placeWithOrders(t, db, others)
	// One connection: the session's handler counters are the batch's.
	one, err := sql.Open("mysql", db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	one.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = one.Close() })
	conn := sqlx.NewSqlConnFromDB(one, sqlx.WithAcceptable(xerr.IsOutcome))
	b := &book.MySQL{DB: conn, Inventory: model.NewInventoryModel(conn), Orders: model.NewSeckillOrderModel(conn),
		Activities: model.NewActivityModel(conn), Store: stock.NewStore(nil, stock.Keys{}), Concurrency: 1}
	items := make([]domain.ReserveItem, n)
	for i := range items {
		uid := int64(1_000_000 + i)
		items[i] = domain.ReserveItem{UID: uid, Qty: 1, RequestID: "batch-" + strconv.FormatInt(uid, 10)}
	}
	before := handlerReads(t, one)
	overhead := handlerReads(t, one) - before // the reading's own
	res, err := b.ReserveBatch(ctx, aid, items)
	touched := handlerReads(t, one) - before - 2*overhead
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil || r.OrderNo == "" || r.Replay {
			t.Fatalf("item %d: %+v, %v; want a new reservation", i, r.Reservation, r.Err)
		}
	}
	if limit := int64(4*n + 16); touched > limit {
		t.Errorf("a batch of %d new buyers read %d index entries and rows (the activity holds %d other orders), "+
			"want at most %d", n, touched, others, limit)
	}
	t.Logf("a batch of %d read %d index entries and rows beside %d other orders", n, touched, others)
}

// placeWithOrders creates an open activity in mode mysql holding others reserved orders of
// other buyers, and returns its id.
func placeWithOrders(t *testing.T, db *testenv.Database, others int) int64 {
	t.Helper()
	now := time.Now()
	res, err := db.DB.Exec("INSERT INTO activity (sku_id, name, total, start_time, end_time, per_user_limit, "+
		"pay_timeout_seconds) VALUES (7, 'kettle', ?, ?, ?, 1, 600)", 2*others, now.Add(-time.Hour).Unix(),
		now.Add(time.Hour).Unix())
	if err != nil {
		t.Fatal(err)
	}
	aid, _ := res.LastInsertId()
	if _, err := db.DB.Exec("INSERT INTO inventory (activity_id, available, locked, mode) VALUES (?, ?, ?, ?)", aid,
		others, others, model.ModeMySQL); err != nil {
		t.Fatal(err)
	}
	orders := model.NewSeckillOrderModel(db.Conn)
	for lo := 0; lo < others; lo += 1000 {
		var batch []*model.SeckillOrder
		for uid := lo + 1; uid <= min(lo+1000, others); uid++ {
			batch = append(batch, &model.SeckillOrder{OrderNo: fmt.Sprintf("%d-other-%d", aid, uid),
				RequestId: fmt.Sprintf("other-%d", uid), ActivityId: uint64(aid), Uid: uint64(uid), Quantity: 1,
				Status: domain.StateReserved, ExpireAt: now.Add(time.Hour).Unix(), PlacedAt: now.Unix()})
		}
		if err := orders.InsertBatch(ctx, db.Conn, batch); err != nil {
			t.Fatal(err)
		}
	}
	return aid
}

// handlerReads is the session's index entries and rows read so far: MariaDB's Handler_read_*
// counters and Handler_icp_attempts (index entries an index condition filtered inside InnoDB).
func handlerReads(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var n int64
	err := db.QueryRow("SELECT COALESCE(SUM(VARIABLE_VALUE), 0) FROM information_schema.SESSION_STATUS " +
		"WHERE VARIABLE_NAME LIKE 'HANDLER\\_READ\\_%' OR VARIABLE_NAME = 'HANDLER_ICP_ATTEMPTS'").Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
