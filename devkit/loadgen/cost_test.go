package loadgen

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// The writer's lag follows how far the "MySQL" is behind: the fake applies each change dbLag
// after it, so the lag wait sees about dbLag, and a target below it fails the check. The
// processes are read at the checkpoint and at the end.
func TestRunCostWriterLagAndProcesses(t *testing.T) {
	for _, tc := range []struct {
		dbLag, maxLag time.Duration
		pass          bool
	}{
		{dbLag: 600 * time.Millisecond, maxLag: 5 * time.Second, pass: true},
		{dbLag: 600 * time.Millisecond, maxLag: 200 * time.Millisecond, pass: false},
		{dbLag: 0, maxLag: 200 * time.Millisecond, pass: true},
	} {
		f := newFakeAPI()
		f.dbLag = tc.dbLag
		srv := f.server(t)
		cfg := fakeConfig(srv.URL)
		cfg.PayTimeout = 30 * time.Second
		cfg.PayFraction, cfg.CancelFraction = 1, 0
		cfg.Cost = CostConfig{PIDs: []int{os.Getpid()}, Checkpoint: 100, LagWait: 5 * time.Second, MaxLag: tc.maxLag}
		r, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		r.WriteText(&text)
		w := r.Cost.WriterLag
		if w == nil || !w.CaughtUp || w.Lag < tc.dbLag/2 || w.Lag > tc.dbLag+2*time.Second {
			t.Errorf("dbLag %s: writer lag %+v\n%s", tc.dbLag, w, text.String())
		}
		if c := checkByName(t, r, "writer lag after the reserve phase"); c.OK != tc.pass {
			t.Errorf("dbLag %s, target %s: check %+v", tc.dbLag, tc.maxLag, c)
		}
		ps := r.Cost.Processes
		if len(ps) != 2 || !ps[0].Service || ps[1].Service || ps[0].At == nil || ps[0].At.Buyers != 100 ||
			ps[0].End == nil || ps[0].End.Buyers != 400 || ps[0].End.RSS <= 0 {
			t.Errorf("processes %+v", ps)
		}
		if !strings.Contains(text.String(), "writer lag") || !strings.Contains(text.String(), "after 100 buyers") {
			t.Errorf("text:\n%s", text.String())
		}
		var page strings.Builder
		if err := r.WriteHTML(&page); err != nil || !strings.Contains(page.String(), "<h2>Cost</h2>") ||
			!strings.Contains(page.String(), "Writer lag after the reserve phase") {
			t.Errorf("html: %v", err)
		}
	}
}

// The RSS check compares the end with the checkpoint, and says when the time bound ended
// the reserve phase before the buyers were all answered or before the checkpoint.
func TestRSSCheck(t *testing.T) {
	r := &Report{Cost: &CostReport{Buyers: 1000, Checkpoint: 100, Reached: 600}}
	mk := func(at, end int64) ProcCost {
		p := ProcCost{PID: 7, Name: "svc", Service: true, End: &ProcSample{Buyers: 600, RSS: end}}
		if at > 0 {
			p.At = &ProcSample{Buyers: 100, RSS: at}
		}
		return p
	}
	r.rssCheck(mk(100<<20, 149<<20), 1.5, " (bound)")
	r.rssCheck(mk(100<<20, 151<<20), 1.5, " (bound)")
	r.rssCheck(mk(0, 151<<20), 1.5, " (bound)")
	c := r.Checks
	if len(c) != 3 || !c[0].OK || c[1].OK || !c[2].Skip || !strings.Contains(c[0].Detail, "1.49x") ||
		!strings.Contains(c[0].Detail, "(bound)") {
		t.Errorf("checks %+v", c)
	}
}

// Unchecked readings (make bench's CPU per request) make no check, even of a process that
// was not read; checked, the same readings fail.
func TestUncheckedCostMakesNoCheck(t *testing.T) {
	for _, unchecked := range []bool{true, false} {
		r := &Report{Cost: &CostReport{Buyers: 1000, Checkpoint: 100, Reached: 1000, Unchecked: unchecked,
			Processes: []ProcCost{{PID: 7, Name: "gone", Service: true, Err: "no such process"}}}}
		r.costChecks()
		if got, want := len(r.Checks), map[bool]int{true: 0, false: 1}[unchecked]; got != want {
			t.Errorf("unchecked %v: checks %+v, want %d", unchecked, r.Checks, want)
		}
	}
}
