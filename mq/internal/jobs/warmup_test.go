package jobs_test

import (
	"errors"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/mq/internal/jobs"
)

// An activity starting within the lead time is warm before its start, with no merchant
// call; one starting later, and one already ended, are left alone. Repeated and concurrent
// runs load it once.
func TestScheduledWarmupBeforeStart(t *testing.T) {
	f := newFixture(t, false)
	now := time.Now()
	soon := f.activity(50, 1, 900, now.Add(20*time.Second), now.Add(time.Hour))
	later := f.activity(50, 1, 900, now.Add(2*time.Hour), now.Add(3*time.Hour))
	ended := f.activity(50, 1, 900, now.Add(-2*time.Hour), now.Add(-time.Hour))
	running := f.activity(50, 1, 900, now.Add(-time.Minute), now.Add(time.Hour)) // created late, never warmed

	for _, id := range []int64{soon, later, ended, running} {
		if _, err := f.env.Store.Stock(ctx, id); !errors.Is(err, stock.ErrNotWarm) {
			t.Fatalf("activity %d warm before the job ran: %v", id, err)
		}
	}
	wc := testConf(t).Warmup
	wc.Lead = time.Minute
	w := jobs.NewWarmup(wc, f.inv, f.db.Conn)
	// Two instances at once.
	var wg sync.WaitGroup
	gate := make(chan struct{})
	results := make([][]int64, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			results[i], errs[i] = w.Run(ctx)
		}()
	}
	close(gate)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	all := append(slices.Clone(results[0]), results[1]...)
	slices.Sort(all)
	want := []int64{min(soon, running), max(soon, running)}
	if !slices.Equal(all, want) {
		t.Fatalf("warmed %v and %v, want %v once in total", results[0], results[1], want)
	}
	snap, err := f.env.Store.Stock(ctx, soon)
	if err != nil {
		t.Fatalf("activity starting soon is not warm: %v", err)
	}
	if time.Now().Unix() >= snap.Start {
		t.Fatalf("checked too late to prove anything: now %d, start %d", time.Now().Unix(), snap.Start)
	}
	if snap.Remaining != 50 || snap.Total != 50 || snap.Limit != 1 || snap.PayTimeout != 900 {
		t.Fatalf("warm stock %+v", snap)
	}
	for _, id := range []int64{later, ended} {
		if _, err := f.env.Store.Stock(ctx, id); !errors.Is(err, stock.ErrNotWarm) {
			t.Fatalf("activity %d should not be warm: %v", id, err)
		}
	}
	ids, err := f.env.Store.Active(ctx, 0, math.MaxInt64)
	if _, ok := ids[soon]; err != nil || !ok {
		t.Fatalf("active set %v (%v) lacks %d", ids, err, soon)
	}
	// Once warm, a later run changes nothing.
	again, err := w.Run(ctx)
	if err != nil || len(again) != 0 {
		t.Fatalf("second run warmed %v (%v)", again, err)
	}
}

// The job as scheduled: the loop from New, with its default interval, warms an activity
// before it starts.
func TestWarmupLoopWarmsBeforeStart(t *testing.T) {
	f := newFixture(t, false)
	start := time.Now().Add(4 * time.Second)
	id := f.activity(10, 1, 900, start, start.Add(time.Hour))
	c := testConf(t)
	c.Warmup.Enabled, c.Warmup.Interval, c.Warmup.Lead = true, time.Second, 10*time.Second
	svcs := jobs.New(c, f.inv, f.db.Conn, nil)
	f.run(svcs[0].Start, svcs[0].Stop)
	f.waitFor("the activity to be warm", 3*time.Second, func() bool {
		_, err := f.env.Store.Stock(ctx, id)
		return err == nil
	})
	if !time.Now().Before(start) {
		t.Fatal("warm only after its start")
	}
}
