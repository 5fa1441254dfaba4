package jobs_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/mq/internal/jobs"
	"github.com/zeromicro/go-zero/core/stores/sqlx"
)

// order inserts an order row as the writer would have written it.
func (f *fixture) order(aid, uid, qty int64, state string, expireAt time.Time) string {
	f.t.Helper()
	no := domain.NewOrderNo(aid)
	if _, err := f.db.DB.Exec("INSERT INTO `seckill_order` (`order_no`, `request_id`, `activity_id`, `uid`, `quantity`, "+
		"`status`, `expire_at`, `placed_at`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		no, "req-"+no, aid, uid, qty, state, expireAt.Unix(), expireAt.Add(-time.Minute).Unix()); err != nil {
		f.t.Fatal(err)
	}
	return no
}

func (f *fixture) setInventory(aid, available, locked, sold int64) {
	f.t.Helper()
	if _, err := f.db.DB.Exec("UPDATE `inventory` SET `available` = ?, `locked` = ?, `sold` = ? WHERE `activity_id` = ?",
		available, locked, sold, aid); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) inventory(aid int64) (available, locked, sold int64) {
	f.t.Helper()
	if err := f.db.DB.QueryRow("SELECT `available`, `locked`, `sold` FROM `inventory` WHERE `activity_id` = ?", aid).
		Scan(&available, &locked, &sold); err != nil {
		f.t.Fatal(err)
	}
	return
}

func (f *fixture) status(orderNo string) string {
	f.t.Helper()
	var s string
	if err := f.db.DB.QueryRow("SELECT `status` FROM `seckill_order` WHERE `order_no` = ?", orderNo).Scan(&s); err != nil {
		f.t.Fatal(err)
	}
	return s
}

// An order MySQL holds as reserved, long past its expire_at, of an activity whose Redis
// keys are gone is expired in MySQL with its stock released, exactly once however many
// sweeps run at the same time; orders not yet overdue, terminal ones and those of a warm
// activity are left alone; nothing happens while the writer has not caught up.
func TestSweepExpiresReservedOrdersWhoseKeysAreGone(t *testing.T) {
	f := newFixture(t, false)
	now := time.Now()
	cold := f.activity(10, 5, 60, now.Add(-3*time.Hour), now.Add(-2*time.Hour)) // ended, never warm now
	a := f.order(cold, 1, 1, domain.StateReserved, now.Add(-2*time.Hour))
	b := f.order(cold, 2, 2, domain.StateReserved, now.Add(-90*time.Minute))
	c := f.order(cold, 3, 1, domain.StateReserved, now.Add(-10*time.Second)) // not overdue by After yet
	d := f.order(cold, 4, 1, domain.StatePaid, now.Add(-2*time.Hour))
	f.setInventory(cold, 5, 4, 1)
	warm := f.live(10, 5, 60)
	w := f.order(warm, 5, 1, domain.StateReserved, now.Add(-2*time.Hour))
	f.setInventory(warm, 9, 1, 0)

	sc := testConf(t).Sweep
	sc.After = time.Minute

	behind := jobs.NewSweep(sc, f.inv, f.db.Conn, func(context.Context) (bool, error) { return false, nil })
	if got, err := behind.Run(ctx); err != nil || len(got) != 0 {
		t.Fatalf("swept %v (%v) while the writer was behind", got, err)
	}
	if av, lk, _ := f.inventory(cold); av != 5 || lk != 4 {
		t.Fatalf("inventory changed while the writer was behind: %d/%d", av, lk)
	}

	var mu sync.Mutex
	var swept []string
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got, err := jobs.NewSweep(sc, f.inv, f.db.Conn, nil).Run(ctx)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			swept = append(swept, got...)
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	slices.Sort(swept)
	want := []string{a, b}
	slices.Sort(want)
	if !slices.Equal(swept, want) {
		t.Fatalf("swept %v, want each of %v exactly once", swept, want)
	}
	for no, st := range map[string]string{a: domain.StateExpired, b: domain.StateExpired, c: domain.StateReserved,
		d: domain.StatePaid, w: domain.StateReserved} {
		if got := f.status(no); got != st {
			t.Errorf("order %s: %s, want %s", no, got, st)
		}
	}
	if av, lk, sd := f.inventory(cold); av != 8 || lk != 1 || sd != 1 {
		t.Errorf("cold inventory %d/%d/%d, want 8/1/1 (the swept 3 units back)", av, lk, sd)
	}
	if av, lk, sd := f.inventory(warm); av != 9 || lk != 1 || sd != 0 {
		t.Errorf("warm inventory %d/%d/%d changed", av, lk, sd)
	}
	if got, err := jobs.NewSweep(sc, f.inv, f.db.Conn, nil).Run(ctx); err != nil || len(got) != 0 {
		t.Errorf("a second sweep expired %v (%v)", got, err)
	}
	// An order paid between the sweep's read and its update stays paid.
	orders := model.NewSeckillOrderModel(f.db.Conn)
	err := f.db.Conn.TransactCtx(ctx, func(ctx context.Context, s sqlx.Session) error {
		changed, err := orders.ExpireReserved(ctx, s, d)
		if changed {
			t.Errorf("ExpireReserved changed the paid order %s", d)
		}
		return err
	})
	if err != nil || f.status(d) != domain.StatePaid {
		t.Errorf("paid order %s: %s (%v)", d, f.status(d), err)
	}
}
