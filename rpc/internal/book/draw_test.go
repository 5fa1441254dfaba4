package book_test

import (
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/book"
	"github.com/seckill/seckill/rpc/internal/degrade"
)

// In degrade mode an activity whose opening draw is not done is BUSY for reservations (entries
// and the draw live in Redis) and sells nothing from MySQL; once the draw is done the MySQL book
// sells in arrival order.
func TestDegradeModeRefusesAnUndecidedDraw(t *testing.T) {
	db := testenv.MySQL(t)
	rds, keys := testenv.Redis(t)
	store := stock.NewStore(rds, keys)
	if err := store.LoadScripts(ctx); err != nil {
		t.Fatal(err)
	}
	conn := book.Conn(db.DSN)
	inventory := model.NewInventoryModel(conn)
	fence := &degrade.Fence{On: true, Conf: degrade.Conf{Concurrency: 4, LeaseMs: 1000}, Inventory: inventory,
		Store: store}
	r := &book.Router{Fence: fence, Redis: book.Redis{Store: store}, MySQL: &book.MySQL{DB: conn, Inventory: inventory,
		Orders: model.NewSeckillOrderModel(conn), Activities: model.NewActivityModel(conn), Store: store,
		Concurrency: 4}}
	res, err := db.DB.Exec("INSERT INTO activity (sku_id, name, total, start_time, end_time, per_user_limit, " +
		"draw_seconds) VALUES (7, 'kettle', 5, 0, 4000000000, 1, 60)")
	if err != nil {
		t.Fatal(err)
	}
	aid, _ := res.LastInsertId()
	if _, err := db.DB.Exec("INSERT INTO inventory (activity_id, available, mode) VALUES (?, 5, 'mysql')",
		aid); err != nil {
		t.Fatal(err)
	}
	// The fence's own BUSY comes first while it takes the activity over (its lease).
	reserve := func() error {
		deadline := time.Now().Add(5 * time.Second)
		for {
			_, err := r.Reserve(ctx, aid, 1, 1, rid(1))
			if err == nil || !strings.Contains(err.Error(), "switching") || time.Now().After(deadline) {
				return err
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	err = reserve()
	want(t, "degrade mode, draw not done", err, xerr.Busy)
	if !strings.Contains(err.Error(), "opening draw") {
		t.Fatalf("BUSY for another reason: %v", err)
	}
	var n int
	if err := db.DB.QueryRow("SELECT COUNT(*) FROM seckill_order").Scan(&n); err != nil || n != 0 {
		t.Fatalf("orders %d (%v): the MySQL book sold before the draw", n, err)
	}
	if _, err := db.DB.Exec("UPDATE activity SET draw_done_at = 1 WHERE id = ?", aid); err != nil {
		t.Fatal(err)
	}
	if err := reserve(); err != nil {
		t.Fatalf("degrade mode after the draw: %v", err)
	}
}
