package loadgen

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every item runs once, on at most Workers goroutines at a time.
func TestDriveRunsEachItemOnce(t *testing.T) {
	seen := make([]atomic.Int32, 500)
	var running, most atomic.Int32
	Drive{N: len(seen), Workers: 8}.Run(context.Background(), func(i int) {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		seen[i].Add(1)
		running.Add(-1)
	}, func(i int) { t.Errorf("item %d skipped", i) })
	for i := range seen {
		if seen[i].Load() != 1 {
			t.Fatalf("item %d ran %d times", i, seen[i].Load())
		}
	}
	if most.Load() > 8 {
		t.Fatalf("%d items at once, 8 workers", most.Load())
	}
}

// Past the deadline, or once the context is done, every item left goes to skip; with skip
// nil the workers stop.
func TestDriveSkipsPastTheDeadline(t *testing.T) {
	var done, skipped atomic.Int32
	Drive{N: 100, Workers: 2, Deadline: time.Now().Add(-time.Second)}.Run(context.Background(),
		func(int) { done.Add(1) }, func(int) { skipped.Add(1) })
	if done.Load() != 0 || skipped.Load() != 100 {
		t.Fatalf("done %d skipped %d, want 0 100", done.Load(), skipped.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	Drive{N: 100, Workers: 2}.Run(ctx, func(int) { done.Add(1) }, nil)
	if done.Load() != 0 {
		t.Fatalf("%d items ran after the context ended", done.Load())
	}
}

// With Spread, item i starts no earlier than Start + Spread*i/N.
func TestDriveSpreadsArrivals(t *testing.T) {
	start := time.Now()
	var mu sync.Mutex
	at := map[int]time.Duration{}
	Drive{N: 5, Workers: 5, Start: start, Spread: 200 * time.Millisecond}.Run(context.Background(), func(i int) {
		mu.Lock()
		at[i] = time.Since(start)
		mu.Unlock()
	}, nil)
	for i := range 5 {
		if want := time.Duration(i) * 40 * time.Millisecond; at[i] < want {
			t.Fatalf("item %d started at %s, before %s", i, at[i], want)
		}
	}
}
