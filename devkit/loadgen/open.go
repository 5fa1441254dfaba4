package loadgen

import (
	"context"
	"sync"
	"time"
)

// Open is the open-loop driver (wrk2's constant throughput, k6's constant-arrival-rate):
// item i is scheduled at Start + i/Rate whatever the answers so far, and its latency is
// counted from that scheduled time, not from when it was sent. A server that slows down
// therefore shows its queue in the percentiles instead of slowing the load down with it
// (coordinated omission: a closed loop waits for the slow answer before sending the
// next request, so the requests that would have waited are never sent or timed).
//
// At most MaxInFlight items run at once. An item whose scheduled time comes while that
// many are in flight waits for a slot and is counted Late (its latency still runs from its
// scheduled time, so the wait is in it); an item that cannot start before Deadline (or
// before ctx ends) is not sent and is counted Dropped. Neither is silent.
type Open struct {
	N           int
	Rate        float64 // arrivals per second (> 0)
	MaxInFlight int     // default 1024
	Start       time.Time
	Deadline    time.Time // zero: none
}

// OpenStats is what an open-loop run measured.
type OpenStats struct {
	Rate     float64 // offered, per second
	Sent     int
	Late     int // waited for a slot: MaxInFlight were in flight at their scheduled time
	Dropped  int // never sent (deadline or ctx)
	Elapsed  time.Duration
	Latency  *LatencyHist   // from each item's scheduled time to its answer
	Codes    map[string]int // each item's outcome
	Timeline []Second       // by completion second since Start
}

// DefaultMaxInFlight bounds an open-loop run's requests in flight.
const DefaultMaxInFlight = 1024

// Scheduled is item i's scheduled time.
func (o Open) Scheduled(i int) time.Time {
	return o.Start.Add(time.Duration(float64(i) / o.Rate * float64(time.Second)))
}

// Run runs do(i) for every item at its scheduled time, each on its own goroutine, and
// records do's outcome code with the latency from the scheduled time to do's return.
func (o Open) Run(ctx context.Context, do func(i int) string) OpenStats {
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.Start.IsZero() {
		o.Start = time.Now()
	}
	rec := newRecorder(o.Start)
	st := OpenStats{Rate: o.Rate}
	slots := make(chan struct{}, o.MaxInFlight)
	var wg sync.WaitGroup
	for i := range o.N {
		at := o.Scheduled(i)
		if wait := time.Until(at); wait > 0 {
			sleep(ctx, wait)
		}
		if !o.startable(ctx) {
			st.Dropped = o.N - i
			break
		}
		if !o.take(ctx, slots, &st) {
			st.Dropped = o.N - i
			break
		}
		st.Sent++
		wg.Add(1)
		go func() {
			defer wg.Done()
			code := do(i)
			end := time.Now()
			rec.add(end, end.Sub(at), code)
			<-slots
		}()
	}
	wg.Wait()
	st.Elapsed = time.Since(o.Start)
	st.Latency, st.Codes, st.Timeline = rec.snapshot()
	return st
}

func (o Open) startable(ctx context.Context) bool {
	return ctx.Err() == nil && (o.Deadline.IsZero() || time.Now().Before(o.Deadline))
}

// take takes a slot, waiting (and counting the item late) when none is free, until ctx
// ends or the deadline passes.
func (o Open) take(ctx context.Context, slots chan struct{}, st *OpenStats) bool {
	select {
	case slots <- struct{}{}:
		return true
	default:
	}
	st.Late++
	var until <-chan time.Time
	if !o.Deadline.IsZero() {
		t := time.NewTimer(time.Until(o.Deadline))
		defer t.Stop()
		until = t.C
	}
	select {
	case slots <- struct{}{}:
		return true
	case <-ctx.Done():
	case <-until:
	}
	return false
}
