package loadgen

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// Against a server of known capacity (8 reservations at once, 20 ms each: 400/s), the
// search finds a rate within a loose factor of it: under it the p99 stays near the service
// time, over it the queue grows through the step and the p99 with it (at 1.25x, 50 requests
// behind by the end of a 500 ms step: 125 ms). The bound is 5x the service time, so that
// a noisy machine's stray delays do not fail the steps under capacity.
func TestFindCapacityFindsKnownCapacity(t *testing.T) {
	f := newFakeAPI()
	f.limit, f.slow = make(chan struct{}, 8), 20*time.Millisecond
	srv := f.server(t)
	var progress bytes.Buffer
	cfg := fakeConfig(srv.URL)
	cfg.Progress = &progress
	rep, err := FindCapacity(context.Background(), cfg, CapacitySearch{StartRate: 100, Step: 500 * time.Millisecond,
		P99Bound: 100 * time.Millisecond, Precision: 0.15, Rest: 50 * time.Millisecond, Budget: 20 * time.Second})
	var text strings.Builder
	if rep != nil {
		rep.WriteText(&text)
	}
	t.Logf("\n%s", text.String())
	if err != nil {
		t.Fatal(err)
	}
	const known = 400.0
	if rep.Capacity < 0.5*known || rep.Capacity > 1.2*known {
		t.Fatalf("capacity %.0f/s, want within 0.5x-1.2x of %.0f/s", rep.Capacity, known)
	}
	// The search's shape: a ramp that doubles until a step fails, every step on its own
	// activity with stock for all its requests (no SOLD_OUT), each step printed.
	if len(rep.Steps) < 4 || rep.Steps[0].Rate != 100 || rep.Steps[1].Rate != 200 || rep.Failing == 0 {
		t.Fatalf("steps %+v, failing %.0f", rep.Steps, rep.Failing)
	}
	seen := map[int64]bool{}
	for _, st := range rep.Steps {
		if seen[st.ActivityID] || st.Codes[CodeSoldOut] > 0 {
			t.Fatalf("step %+v: activity reused or sold out", st)
		}
		seen[st.ActivityID] = true
		if st.Rate > rep.Failing && st.Pass || st.Rate > rep.Capacity && st.Rate < rep.Failing {
			t.Fatalf("step %+v contradicts capacity %.0f, failing %.0f", st, rep.Capacity, rep.Failing)
		}
	}
	if got := strings.Count(progress.String(), "/s  p50 "); got != len(rep.Steps) {
		t.Fatalf("%d step lines printed for %d steps:\n%s", got, len(rep.Steps), progress.String())
	}
}

// A step with an error fails whatever its p99: BUSY answers are errors, not fast answers.
func TestFindCapacityCountsBusyAsErrors(t *testing.T) {
	f := newFakeAPI()
	f.busyFirst = true
	srv := f.server(t)
	rep, err := FindCapacity(context.Background(), fakeConfig(srv.URL), CapacitySearch{StartRate: 50,
		Step: 200 * time.Millisecond, Rest: time.Millisecond, Budget: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Capacity != 0 || len(rep.Steps) == 0 || rep.Steps[0].Pass || rep.Steps[0].Codes["BUSY"] == 0 {
		t.Fatalf("capacity %.0f with every answer BUSY: %+v", rep.Capacity, rep.Steps)
	}
	if rep.Steps[1].Rate != 25 {
		t.Fatalf("after a failing first step the search halves: %+v", rep.Steps)
	}
}

// The report plots p99 against the offered rate: a point per step, the bound, the capacity.
func TestCapacityHTML(t *testing.T) {
	rep := &CapacityReport{Target: "http://127.0.0.1:1", P99Bound: 50 * time.Millisecond, Capacity: 400,
		Failing: 800, Stopped: "bracketed within 5%", MaxInFlight: 1024, Steps: []CapacityStep{
			{Rate: 100, Pass: true, Latency: Latency{P99: 12 * time.Millisecond}},
			{Rate: 200, Pass: true, Latency: Latency{P99: 14 * time.Millisecond}},
			{Rate: 400, Pass: true, Latency: Latency{P99: 30 * time.Millisecond}},
			{Rate: 800, Errors: 3, Latency: Latency{P99: 2 * time.Second}},
		}}
	var b bytes.Buffer
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"<svg", "p99 bound 50ms", "capacity 400/s", "800/s: p99 2s, errors 3",
		"400 reservations/s (800/s failed)"} {
		if !strings.Contains(page, want) {
			t.Errorf("no %q in the page", want)
		}
	}
	if n := strings.Count(page, "<circle"); n != 4 {
		t.Errorf("%d points for 4 steps", n)
	}
}
