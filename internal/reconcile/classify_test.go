package reconcile_test

import (
	"testing"
	"time"

	"github.com/seckill/seckill/internal/reconcile"
)

func TestUnexplainedDifferenceIsConfirmedAcrossRuns(t *testing.T) {
	f := newFixture(t, 300*time.Millisecond)
	if _, err := f.env.Store.Confirm(ctx, f.nos[2], 3); err != nil {
		t.Fatal(err)
	}
	_, _ = f.env.Redis.DelCtx(ctx, f.env.Keys.Events(f.aid)) // the pay event is lost
	first, err := f.rec.Run(ctx, f.aid)
	if err != nil || first.Status != reconcile.InFlight || len(first.Orders) != 1 ||
		first.Orders[0].Class != reconcile.Pending {
		t.Fatalf("first run: %+v %v", first, err)
	}
	// Another reconciler (another instance) sees the same history.
	other := reconcile.New(recConf(t, 300*time.Millisecond), f.env.Store, f.env.Redis, f.env.Keys.Prefix, f.db.Conn)
	time.Sleep(350 * time.Millisecond)
	second, err := other.Run(ctx, f.aid)
	if err != nil || second.Status != reconcile.Mismatch || second.Orders[0].Class != reconcile.Missing ||
		!has(second, "order "+f.nos[2]+": redis paid, mysql reserved (unexplained for") {
		t.Fatalf("second run: %+v %v", second, err)
	}
	// Fixed behind the reconciler's back (as the writer would): consistent, history cleared.
	f.exec("UPDATE `seckill_order` SET `status` = 'paid' WHERE `order_no` = ?", f.nos[2])
	f.exec("UPDATE `inventory` SET `locked` = `locked` - 1, `sold` = `sold` + 1 WHERE `activity_id` = ?", f.aid)
	third, err := f.rec.Run(ctx, f.aid)
	if err != nil || third.Status != reconcile.Consistent {
		t.Fatalf("third run: %+v %v", third, err)
	}
	if h, err := f.rec.History(ctx, f.aid); err != nil || len(h) != 0 {
		t.Fatalf("history left behind: %v %v", h, err)
	}
}
