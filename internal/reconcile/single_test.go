package reconcile_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/reconcile"
)

// A hundred callers at once, split over two instances (two Singles over one Redis and one
// MySQL), cost at most a few comparisons, and every caller gets a consistent report.
func TestConcurrentReconcilesShareOneRun(t *testing.T) {
	f := newFixture(t, 0)
	instances := []*reconcile.Single{reconcile.NewSingle(f.rec),
		reconcile.NewSingle(reconcile.New(recConf(t, 0), f.env.Store, f.env.Redis, f.env.Keys.Prefix, f.db.Conn))}
	runs := func() float64 { return testenv.Counter(t, "seckill_inventory_reconcile_runs_total", nil) }
	before := runs()
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			<-start
			rep, err := instances[i%2].Run(ctx, f.aid)
			if err != nil || rep.Status != reconcile.Consistent || rep.ActivityID != f.aid {
				t.Errorf("caller %d: %+v, %v", i, rep, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if n := runs() - before; n < 1 || n > 3 {
		t.Fatalf("100 concurrent callers ran %v comparisons, want 1 to 3", n)
	} else {
		t.Logf("100 concurrent callers on two instances: %v comparison(s)", n)
	}
	// A caller after those runs gets a fresh one, not the kept report.
	if _, err := instances[0].Run(ctx, f.aid); err != nil {
		t.Fatal(err)
	}
	if n := runs() - before; n < 2 {
		t.Fatalf("a later caller was answered from an old run (%v runs in all)", n)
	}
}

// A caller that asks while a run is reading gets a run that began after it asked, on the
// same instance (which would join the run in flight) and on another (which would wait for
// the kept report): a reservation made before the call is in its report. Sharing the run
// in progress answered from before it (mq's TestReconcileSaleInFlightThenConsistent failed
// under load: its own call got the scheduled job's run, begun before the sale's last
// change, and later its run begun before the expiries it had waited for).
func TestACallerGetsARunBegunAfterItAsked(t *testing.T) {
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	const n = 600 // HSCAN COUNT 500: at least two chunks, a pause between them
	aid := bigActivity(t, env, db, n, 10)
	for i, other := range []bool{false, true} {
		rec := reconcile.New(recConf(t, time.Hour), env.Store, env.Redis, env.Keys.Prefix, db.Conn)
		held, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		rec.SetSleep(func(context.Context, time.Duration) error { // the first run pauses mid-read
			once.Do(func() { close(held); <-release })
			return nil
		})
		first, second := reconcile.NewSingle(rec), reconcile.NewSingle(rec)
		if other {
			second = reconcile.NewSingle(reconcile.New(recConf(t, time.Hour), env.Store, env.Redis, env.Keys.Prefix, db.Conn))
		}
		done := runAsync(t, first, aid)
		select {
		case <-held:
		case <-done:
			t.Fatal("the first run never paused between chunks")
		}
		if _, err := stocktest.Reserve(ctx, env.Store, aid, n+1+int64(i), 1, fmt.Sprintf("late-req-%d", i)); err != nil {
			t.Fatal(err)
		}
		asked := make(chan struct{})
		var askOnce sync.Once
		second.SetNow(func() time.Time { askOnce.Do(func() { close(asked) }); return time.Now() })
		got := runAsync(t, second, aid)
		<-asked
		close(release)
		old, rep := <-done, <-got
		if rep.Redis == nil || old.Redis == nil || rep.Redis.Locked != old.Redis.Locked+1 {
			t.Fatalf("other instance %v: the later caller's report %+v, the run in progress %+v: "+
				"want one more locked", other, rep.Redis, old.Redis)
		}
	}
}

// runAsync runs s.Run(aid) on a goroutine of its own; its report comes on the channel.
func runAsync(t *testing.T, s *reconcile.Single, aid int64) <-chan reconcile.Report {
	out := make(chan reconcile.Report, 1)
	go func() {
		rep, err := s.Run(ctx, aid)
		if err != nil {
			t.Error(err)
		}
		out <- rep
	}()
	return out
}

// The comparison's lease keeps the key an earlier version's instances take (a rolling upgrade
// shares it): sk:{a<ID>}:reconlock.
func TestLockKeepsItsKeyName(t *testing.T) {
	e := stocktest.New(t)
	held, err := e.Store.Lock(7, reconcile.LockName).AcquireCtx(context.Background())
	if n, _ := e.Redis.Exists(e.Keys.Prefix + "sk:{a7}:reconlock"); !held || err != nil || !n {
		t.Errorf("the reconciliation lease (%v, %v) is not at sk:{a7}:reconlock", held, err)
	}
}

// The history and the shared report keep the keys an earlier version's instances use (a rolling
// upgrade shares them): sk:{a<ID>}:recon and sk:{a<ID>}:reconrep.
func TestRecordsKeepTheirKeyNames(t *testing.T) {
	r := reconcile.New(reconcile.Conf{}, nil, nil, "p:", nil)
	if h, rep := r.RecordKeys(7); h != "p:sk:{a7}:recon" || rep != "p:sk:{a7}:reconrep" {
		t.Errorf("records %q %q, want p:sk:{a7}:recon p:sk:{a7}:reconrep", h, rep)
	}
}
