package loadgen

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Drive is devkit's one load driver: items 0..N-1 (buyers, requests, order reads) on
// Workers goroutines, each taking the next item. The load generator's phases, devkit/
// baseline's load runs and the fault suite's bursts all run on it.
type Drive struct {
	N       int
	Workers int // at most N are started
	// Deadline, when set: no item is started after it.
	Deadline time.Time
	// Spread, when set: item i is not started before Start + Spread*i/N (arrivals spread
	// evenly over the window, as buyers of a sale arrive).
	Start  time.Time
	Spread time.Duration
}

// Run runs do(i) for every item. An item that cannot start (ctx done, Deadline passed) is
// handed to skip, and the workers go on skipping the rest; with skip nil they stop.
func (d Drive) Run(ctx context.Context, do, skip func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(d.Workers, d.N) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= d.N {
					return
				}
				if d.Spread > 0 {
					sleep(ctx, time.Until(d.Start.Add(d.Spread*time.Duration(i)/time.Duration(d.N))))
				}
				if ctx.Err() != nil || (!d.Deadline.IsZero() && time.Now().After(d.Deadline)) {
					if skip == nil {
						return
					}
					skip(i)
					continue
				}
				do(i)
			}
		}()
	}
	wg.Wait()
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
