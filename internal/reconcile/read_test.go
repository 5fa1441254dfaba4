package reconcile_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/reconcile"
)

// bigActivity warms an activity with n reserved orders (every other one paid), MySQL
// mirrored, outbox emptied; total is n + spare.
func bigActivity(tb testing.TB, env *stocktest.Env, db *testenv.Database, n, spare int64) int64 {
	tb.Helper()
	aid := env.Warm(stocktest.Spec{Total: n + spare, Limit: 1, PayTimeout: 3600})
	var rows []string
	var args []any
	var mu sync.Mutex
	var wg sync.WaitGroup
	const workers = 16
	for w := range int64(workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for uid := w + 1; uid <= n; uid += workers {
				r, err := stocktest.Reserve(ctx, env.Store, aid, uid, 1, fmt.Sprintf("big-req-%d", uid))
				if err != nil {
					tb.Error(err)
					return
				}
				st := "reserved"
				if uid%2 == 0 {
					if _, err := env.Store.Confirm(ctx, r.OrderNo, uid); err != nil {
						tb.Error(err)
						return
					}
					st = "paid"
				}
				mu.Lock()
				rows = append(rows, "(?, ?, ?, ?, 1, ?)")
				args = append(args, r.OrderNo, fmt.Sprintf("big-req-%d", uid), aid, uid, st)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if tb.Failed() {
		tb.FailNow()
	}
	s, _ := env.Store.Stock(ctx, aid)
	exec := func(q string, a ...any) {
		if _, err := db.DB.Exec(q, a...); err != nil {
			tb.Fatal(err)
		}
	}
	exec("INSERT INTO `activity` (`id`, `sku_id`, `name`, `total`, `start_time`, `end_time`) "+
		"VALUES (?, 7, 'big', ?, ?, ?)",
		aid, s.Total, s.Start, s.End)
	exec("INSERT INTO `inventory` (`activity_id`, `available`, `locked`, `sold`) VALUES (?, ?, ?, ?)",
		aid, s.Remaining, s.Locked, s.Sold)
	for i := 0; i < len(rows); i += 1000 {
		j := min(i+1000, len(rows))
		exec("INSERT INTO `seckill_order` (`order_no`, `request_id`, `activity_id`, `uid`, `quantity`, `status`) VALUES "+
			strings.Join(rows[i:j], ", "), args[i*5:j*5]...)
	}
	_, _ = env.Redis.DelCtx(ctx, env.Keys.Events(aid))
	return aid
}

// Reconciliation reads the orders in chunks while reservations, pays and cancels change
// them: every run must still see one consistent moment (never a mismatch; what MySQL
// lacks is in the outbox, so in_flight), and a run after the burst, MySQL untouched, is
// in_flight with every change explained.
func TestChunkedSnapshotDuringABurst(t *testing.T) {
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	const n = 3000
	aid := bigActivity(t, env, db, n, 1_000_000)
	rec := reconcile.New(recConf(t, time.Hour), env.Store, env.Redis, env.Keys.Prefix, db.Conn)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var changes atomic.Int64
	for w := range int64(4) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for uid := n + 1 + w; ; uid += 4 {
				select {
				case <-stop:
					return
				default:
				}
				r, err := stocktest.Reserve(ctx, env.Store, aid, uid, 1, fmt.Sprintf("burst-%d", uid))
				if err != nil {
					t.Error(err)
					return
				}
				switch uid % 3 {
				case 0:
					_, err = env.Store.Confirm(ctx, r.OrderNo, uid)
				case 1:
					_, err = env.Store.Release(ctx, r.OrderNo, uid, domain.StateCancelled)
				}
				if err != nil {
					t.Error(err)
					return
				}
				changes.Add(2)
			}
		}()
	}
	runs := 0
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); runs++ {
		r, err := rec.Run(ctx, aid)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status == reconcile.Mismatch {
			t.Fatalf("run %d during the burst: mismatch: %v", runs, r.Diffs)
		}
	}
	close(stop)
	wg.Wait()
	r, err := rec.Run(ctx, aid)
	if err != nil || r.Status != reconcile.InFlight {
		t.Fatalf("after the burst: %v %v %v", r.Status, r.Diffs, err)
	}
	env.CheckInvariant(aid)
	t.Logf("%d runs during %d changes", runs, changes.Load())
}

// A run reads Redis paced by ReadDuty: after each chunk of orders but the last it pauses
// (1/ReadDuty - 1) times as long as the chunk took, and never at ReadDuty 1; the report is
// the same either way.
func TestReadDutyPacesTheRedisReads(t *testing.T) {
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	const n = 1600 // ZSCAN COUNT 500: at least 3 chunks
	aid := bigActivity(t, env, db, n, 10)
	for _, duty := range []float64{1, 0.25} {
		c := recConf(t, time.Hour)
		c.ReadDuty = duty
		rec := reconcile.New(c, env.Store, env.Redis, env.Keys.Prefix, db.Conn)
		var pauses []float64 // pause ÷ the chunk before it, timed from outside
		last := time.Now()
		rec.SetSleep(func(_ context.Context, d time.Duration) error {
			pauses = append(pauses, float64(d)/float64(time.Since(last)))
			last = time.Now()
			return nil
		})
		last = time.Now()
		r, err := rec.Run(ctx, aid)
		if err != nil || r.Status != reconcile.Consistent {
			t.Fatalf("duty %v: %v %v %v", duty, r.Status, r.Diffs, err)
		}
		switch {
		case duty == 1 && len(pauses) > 0:
			t.Errorf("duty 1: %d pauses, want none", len(pauses))
		case duty < 1 && len(pauses) < 2:
			t.Errorf("duty %v: %d pauses over %d orders, want one after each chunk but the last", duty, len(pauses), n)
		}
		for i, p := range pauses[min(1, len(pauses)):] { // the first chunk's time also holds the MySQL read
			// 3 times the chunk it follows, which the outside view sees slightly longer
			if p > 3.0001 || p < 2.5 {
				t.Errorf("duty %v: pause %d is %.2f times its chunk, want 3", duty, i+1, p)
			}
		}
	}
}

// BenchmarkReserveDuringReconcile100k measures reservation latency on an activity of
// 100,000 orders, without and with a reconciliation of it running back to back, unpaced
// (ReadDuty 1) and as shipped:
//
//	go test -tags no_k8s -run '^$' -bench ReserveDuringReconcile -benchtime 1x ./internal/reconcile/
func BenchmarkReserveDuringReconcile100k(b *testing.B) {
	env := stocktest.New(b)
	db := testenv.MySQL(b)
	const n = 100000
	aid := bigActivity(b, env, db, n, 1_000_000)
	unpaced := recConf(b, time.Hour)
	unpaced.ReadDuty = 1
	uid := atomic.Int64{}
	uid.Store(n)
	measure := func(d time.Duration) (p50, p99, slowest time.Duration, count int) {
		var mu sync.Mutex
		var lat []time.Duration
		var wg sync.WaitGroup
		end := time.Now().Add(d)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(end) {
					u := uid.Add(1)
					t0 := time.Now()
					if _, err := stocktest.Reserve(ctx, env.Store, aid, u, 1, fmt.Sprintf("lat-%d", u)); err != nil {
						b.Error(err)
						return
					}
					el := time.Since(t0)
					mu.Lock()
					lat = append(lat, el)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		return lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1], len(lat)
	}
	during := func(name string, rec *reconcile.Reconciler) {
		stop := make(chan struct{})
		runs := atomic.Int64{}
		var took atomic.Int64
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				default:
				}
				t0 := time.Now()
				if _, err := rec.Run(ctx, aid); err != nil {
					b.Error(err)
					return
				}
				took.Add(int64(time.Since(t0)))
				runs.Add(1)
			}
		}()
		p50, p99, mx, c := measure(3 * time.Second)
		close(stop)
		<-done
		b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms-reconciling-"+name)
		b.Logf("during %d %s reconciliations (%v each): %d reservations, p50 %v p99 %v max %v", runs.Load(), name,
			time.Duration(took.Load()/max(runs.Load(), 1)), c, p50, p99, mx)
	}
	b.ResetTimer()
	for b.Loop() {
		p50, p99, mx, c := measure(3 * time.Second)
		b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms-alone")
		b.Logf("alone: %d reservations, p50 %v p99 %v max %v", c, p50, p99, mx)
		for _, cf := range []struct {
			name string
			c    reconcile.Conf
		}{{"unpaced", unpaced}, {"shipped", recConf(b, time.Hour)}} {
			during(cf.name, reconcile.New(cf.c, env.Store, env.Redis, env.Keys.Prefix, db.Conn))
		}
	}
}
