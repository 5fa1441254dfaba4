package reconcile_test

import (
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/reconcile"
)

// A hundred callers at once, split over two instances (two Singles over one Redis and one
// MySQL), cost at most a few comparisons, and every caller gets a consistent report.
func TestConcurrentReconcilesShareOneRun(t *testing.T) {
	f := newFixture(t, 0)
	instances := []*reconcile.Single{reconcile.NewSingle(f.rec),
		reconcile.NewSingle(reconcile.New(recConf(t, 0), f.env.Store, f.db.Conn))}
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

// A call that begins in the millisecond a run finished runs again: that run may have read the
// books before the call's caller changed them (a test that changed Redis right after a
// consistent run was once answered that run's report).
func TestCallInTheMillisecondOfAReportRunsAgain(t *testing.T) {
	f := newFixture(t, 0)
	s := reconcile.NewSingle(f.rec)
	frozen := time.Now()
	s.SetNow(func() time.Time { return frozen })
	runs := func() float64 { return testenv.Counter(t, "seckill_inventory_reconcile_runs_total", nil) }
	if _, err := s.Run(ctx, f.aid); err != nil {
		t.Fatal(err)
	}
	before := runs()
	if _, err := s.Run(ctx, f.aid); err != nil {
		t.Fatal(err)
	}
	if n := runs() - before; n != 1 {
		t.Fatalf("a call in the millisecond of the last report ran %v comparisons, want 1", n)
	}
}
