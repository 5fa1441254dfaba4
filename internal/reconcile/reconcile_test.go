package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/conf"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/reconcile"
	"github.com/seckill/seckill/internal/xerr"
)

var ctx = context.Background()

type fixture struct {
	env *stocktest.Env
	db  *testenv.Database
	rec *reconcile.Reconciler
	aid int64
	nos []string
}

// newFixture: a warm activity of 10 with 4 orders (paid, cancelled, reserved, reserved)
// and MySQL written as the drained pipeline leaves it (mirror), the outbox emptied.
func newFixture(t *testing.T, confirmAfter time.Duration) *fixture {
	t.Helper()
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	f := &fixture{env: env, db: db,
		rec: reconcile.New(recConf(t, confirmAfter), env.Store, env.Redis, env.Keys.Prefix, db.Conn)}
	f.aid = env.Warm(stocktest.Spec{Total: 10, Limit: 1})
	for uid := int64(1); uid <= 4; uid++ {
		r, err := stocktest.Reserve(ctx, env.Store, f.aid, uid, 1, fmt.Sprintf("unit-req-%d", uid))
		if err != nil {
			t.Fatal(err)
		}
		f.nos = append(f.nos, r.OrderNo)
	}
	if _, err := env.Store.Confirm(ctx, f.nos[0], 1); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Store.Release(ctx, f.nos[1], 2, domain.StateCancelled); err != nil {
		t.Fatal(err)
	}
	f.mirror()
	return f
}

// recConf is the configuration's defaults (as go-zero's loader fills them) with the given
// ConfirmAfter (0: the default).
func recConf(t testing.TB, confirmAfter time.Duration) reconcile.Conf {
	t.Helper()
	var c reconcile.Conf
	if err := conf.FillDefault(&c); err != nil {
		t.Fatal(err)
	}
	if confirmAfter > 0 {
		c.ConfirmAfter = confirmAfter
	}
	return c
}

// mirror writes MySQL as a drained pipeline would have: one row per Redis order in its
// state, inventory equal to the Redis counters; and empties the outbox.
func (f *fixture) mirror() {
	f.env.T.Helper()
	s, err := f.env.Store.Stock(ctx, f.aid)
	if err != nil {
		f.env.T.Fatal(err)
	}
	f.exec("INSERT INTO `activity` (`id`, `sku_id`, `name`, `total`, `start_time`, `end_time`) "+
		"VALUES (?, 7, 'unit', ?, ?, ?)",
		f.aid, s.Total, s.Start, s.End)
	f.exec("INSERT INTO `inventory` (`activity_id`, `available`, `locked`, `sold`) VALUES (?, ?, ?, ?)",
		f.aid, s.Remaining, s.Locked, s.Sold)
	for _, no := range f.nos {
		o, err := f.env.Store.Order(ctx, no)
		if err != nil {
			f.env.T.Fatal(err)
		}
		f.exec("INSERT INTO `seckill_order` (`order_no`, `request_id`, `activity_id`, `uid`, `quantity`, `status`) "+
			"VALUES (?, ?, ?, ?, ?, ?)", no, o.RequestID, f.aid, o.UID, o.Quantity, o.State)
	}
	if _, err := f.env.Redis.DelCtx(ctx, f.env.Keys.Events(f.aid)); err != nil {
		f.env.T.Fatal(err)
	}
}

func (f *fixture) exec(q string, args ...any) {
	f.env.T.Helper()
	if _, err := f.db.DB.Exec(q, args...); err != nil {
		f.env.T.Fatal(err)
	}
}

func has(r reconcile.Report, part string) bool {
	for _, d := range r.Diffs {
		if strings.Contains(d, part) {
			return true
		}
	}
	return false
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name    string
		change  func(f *fixture)
		status  reconcile.Status
		flight  int64
		diff    string // a line that must be in the report
		repairs int    // events Repair re-emits; -1: refused
	}{
		{"drained books agree", func(f *fixture) {}, reconcile.Consistent, 0, "", 0},
		{"a pay still in the outbox", func(f *fixture) {
			if _, err := f.env.Store.Confirm(ctx, f.nos[2], 3); err != nil {
				t.Fatal(err)
			}
		}, reconcile.InFlight, 1, "redis paid, mysql reserved (event in the outbox)", 0},
		{"an adjustment still in the outbox", func(f *fixture) {
			if _, _, err := f.env.Store.Adjust(ctx, f.aid, 5, "", ""); err != nil {
				t.Fatal(err)
			}
		}, reconcile.InFlight, 1, "total: redis 15, mysql 10 (redis +5)", 0},
		{"an adjustment applied, its entry still in the outbox", func(f *fixture) {
			if _, _, err := f.env.Store.Adjust(ctx, f.aid, 5, "", ""); err != nil {
				t.Fatal(err)
			}
			last, err := f.env.Raw.XRevRangeN(ctx, f.env.Keys.Events(f.aid), "+", "-", 1).Result()
			if err != nil || len(last) != 1 {
				t.Fatalf("outbox: %v %v", last, err)
			}
			f.exec("INSERT INTO `stock_adjustment` (`event_id`, `activity_id`, `delta`) VALUES (?, ?, 5)", last[0].ID, f.aid)
			f.exec("UPDATE `inventory` SET `available` = `available` + 5 WHERE `activity_id` = ?", f.aid)
			f.exec("UPDATE `activity` SET `total` = `total` + 5 WHERE `id` = ?", f.aid)
		}, reconcile.Consistent, 0, "", 0},
		{"a pay neither in the outbox nor applied", func(f *fixture) {
			if _, err := f.env.Store.Confirm(ctx, f.nos[2], 3); err != nil {
				t.Fatal(err)
			}
			_, _ = f.env.Redis.DelCtx(ctx, f.env.Keys.Events(f.aid))
		}, reconcile.InFlight, 1, "not in the outbox, not applied yet", 1},
		{"mysql ahead of redis", func(f *fixture) {
			f.exec("UPDATE `seckill_order` SET `status` = 'paid' WHERE `order_no` = ?", f.nos[3])
			f.exec("UPDATE `inventory` SET `locked` = `locked` - 1, `sold` = `sold` + 1 WHERE `activity_id` = ?", f.aid)
		}, reconcile.Mismatch, 0, "redis reserved, mysql paid (mysql is ahead of redis", -1},
		{"an order only mysql has", func(f *fixture) {
			f.exec("INSERT INTO `seckill_order` (`order_no`, `request_id`, `activity_id`, `uid`, `quantity`, `status`) "+
				"VALUES (?, 'x-req-0001', ?, 99, 1, 'cancelled')", fmt.Sprintf("%d-1700000000000abcdef01", f.aid), f.aid)
		}, reconcile.Mismatch, 0, "in mysql (cancelled, qty 1), not in redis", -1},
		{"mysql inventory not matching its rows", func(f *fixture) {
			f.exec("UPDATE `inventory` SET `available` = `available` - 1, `sold` = `sold` + 1 WHERE `activity_id` = ?", f.aid)
		}, reconcile.Mismatch, 0, "mysql: inventory says locked 2 sold 2, its order rows hold reserved 2 paid 1", -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, time.Hour)
			tc.change(f)
			r, err := f.rec.Run(ctx, f.aid)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != tc.status || r.InFlight != tc.flight || (tc.diff != "" && !has(r, tc.diff)) ||
				(tc.status == reconcile.Consistent && len(r.Diffs) != 0) {
				t.Fatalf("got %s, in flight %d, diffs %q; want %s, %d, a line with %q", r.Status, r.InFlight, r.Diffs,
					tc.status, tc.flight, tc.diff)
			}
			n, _, err := f.rec.Repair(ctx, f.aid)
			switch {
			case tc.repairs < 0 && !errors.Is(err, reconcile.ErrRefused):
				t.Fatalf("repair: %d, %v; want refused", n, err)
			case tc.repairs >= 0 && (err != nil || n != tc.repairs):
				t.Fatalf("repair: %d, %v; want %d", n, err, tc.repairs)
			}
			if tc.repairs > 0 { // re-emitted packed, as the scripts write entries
				checkReEmitted(t, f, tc.repairs)
			}
		})
	}
}

// checkReEmitted checks that the last n entries of f's outbox are packed events.
func checkReEmitted(t *testing.T, f *fixture, n int) {
	t.Helper()
	msgs, err := f.env.Raw.XRange(ctx, f.env.Keys.Events(f.aid), "-", "+").Result()
	if err != nil || len(msgs) < n {
		t.Fatalf("outbox after repair: %v, %v", msgs, err)
	}
	for _, m := range msgs[len(msgs)-n:] {
		if _, err := event.FromStream(m.ID, m.Values); err != nil || len(m.Values) != 1 ||
			m.Values[event.FieldEntry] == nil {
			t.Fatalf("re-emitted entry %v: %v", m.Values, err)
		}
	}
}

// A difference nothing explains is pending on the first run and a mismatch on a later one
// once ConfirmAfter has passed; a difference that goes away leaves no history behind.
func TestNotWarmAndUnknown(t *testing.T) {
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	rec := reconcile.New(recConf(t, 0), env.Store, env.Redis, env.Keys.Prefix, db.Conn)
	if _, err := rec.Run(ctx, 424242); xerr.CodeOf(err) != xerr.ActivityNotFound {
		t.Fatalf("unknown activity: %v", err)
	}
	if _, err := db.DB.Exec("INSERT INTO `activity` (`id`, `sku_id`, `name`, `total`, `start_time`, `end_time`) " +
		"VALUES (5, 1, 'cold', 3, 0, 1)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DB.Exec("INSERT INTO `inventory` (`activity_id`, `available`) VALUES (5, 3)"); err != nil {
		t.Fatal(err)
	}
	r, err := rec.Run(ctx, 5)
	if err != nil || r.Status != reconcile.Consistent || r.Redis != nil || r.DB.Available != 3 {
		t.Fatalf("cold activity: %+v %v", r, err)
	}
	if _, _, err := rec.Repair(ctx, 5); !errors.Is(err, reconcile.ErrRefused) {
		t.Fatalf("repair of a cold activity: %v", err)
	}
}

// An order MySQL holds as reserved past its expire_at, of an activity Redis no longer
// holds, is flagged (nothing but the sweep will expire it); once it is expired with its
// stock back, the activity is consistent again. One not yet past its expire_at is not.
func TestColdActivityWithOverdueReservedOrder(t *testing.T) {
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	rec := reconcile.New(recConf(t, 0), env.Store, env.Redis, env.Keys.Prefix, db.Conn)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.DB.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec("INSERT INTO `activity` (`id`, `sku_id`, `name`, `total`, `start_time`, `end_time`) " +
		"VALUES (6, 1, 'cold', 3, 0, 1)")
	exec("INSERT INTO `inventory` (`activity_id`, `available`, `locked`) VALUES (6, 1, 2)")
	past, future := time.Now().Add(-time.Hour).Unix(), time.Now().Add(time.Hour).Unix()
	exec("INSERT INTO `seckill_order` (`order_no`, `request_id`, `activity_id`, `uid`, `quantity`, `status`, "+
		"`expire_at`) VALUES "+
		"('6-aaaaaaaa01', 'req-aaaaaaaa', 6, 1, 1, 'reserved', ?), ('6-bbbbbbbb02', 'req-bbbbbbbb', 6, 2, 1, 'reserved', ?)",
		past, future)
	r, err := rec.Run(ctx, 6)
	if err != nil || r.Status != reconcile.Mismatch || !strings.Contains(strings.Join(r.Diffs, "\n"),
		"1 order(s) reserved past their expire_at") ||
		!strings.Contains(strings.Join(r.Diffs, "\n"), "6-aaaaaaaa01") {
		t.Fatalf("overdue reserved order of a cold activity: %+v %v", r, err)
	}
	exec("UPDATE `seckill_order` SET `status` = 'expired' WHERE `order_no` = '6-aaaaaaaa01'")
	exec("UPDATE `inventory` SET `available` = 2, `locked` = 1 WHERE `activity_id` = 6")
	if r, err := rec.Run(ctx, 6); err != nil || r.Status != reconcile.Consistent {
		t.Fatalf("after the sweep: %+v %v", r, err)
	}
}
