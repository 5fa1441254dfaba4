package benchrun

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/seckill/seckill/devkit/baseline"
	"github.com/seckill/seckill/devkit/loadgen"
	"github.com/seckill/seckill/devkit/standalone"
)

// Capacity is the "capacity at p99" row's two searches (loadgen.SearchCapacity), the bare
// handler's first.
type Capacity struct {
	P99Bound time.Duration           `json:"p99_bound_ns"`
	Budget   time.Duration           `json:"budget_ns"` // both searches together
	Subject  *loadgen.CapacityReport `json:"reservations,omitempty"`
	Baseline *loadgen.CapacityReport `json:"bare,omitempty"`
}

// capacitySearch runs one capacity search with the bounds s.
type capacitySearch func(ctx context.Context, s loadgen.CapacitySearch) (*loadgen.CapacityReport, error)

// capacitySettings are the bounds of each of the row's two searches: half the budget each.
func (c *Config) capacitySettings() loadgen.CapacitySearch {
	return loadgen.CapacitySearch{P99Bound: c.CapacityP99, Step: c.CapacityStep, Budget: c.CapacityBudget / 2,
		StartRate: 200, Precision: 0.1, Rest: 300 * time.Millisecond}
}

// capacityRows measures the "capacity at p99" row on sys: the bare handler's search, then
// the gateway's reservations' (FindCapacity, a fresh activity per step), each through
// loadgen's Open driver.
func capacityRows(ctx context.Context, c *Config, sys *standalone.System, logf func(string, ...any),
	notes *[]string) (Row, *Capacity) {
	bc := sys.Configs.Gateway.RestConf
	bc.Name, bc.Port = "seckill-bench-baseline", 0
	srv, err := baseline.StartBare(bc)
	if err != nil {
		return Row{Label: "capacity at p99 <= " + dur(c.CapacityP99), Error: "bare handler: " + err.Error()}, nil
	}
	defer srv.Close()
	// Buyers past every other measurement's (httpRows' uidBase and strides), and each
	// search's (the warm-up's too) past the last one's.
	uidBase := time.Now().Unix()%1_000_000*1_000_000 + 700_000
	calls := int64(0)
	uids := func() int64 { calls++; return uidBase + calls*2_000_000 }
	bare := func(ctx context.Context, s loadgen.CapacitySearch) (*loadgen.CapacityReport, error) {
		progress := func(format string, args ...any) { logf("  bare handler, "+format, args...) }
		return baseline.Capacity(ctx, baseline.CapacityConfig{Timeout: requestTimeout, Progress: progress}, srv.URL, s,
			buyerRequest(baseline.BarePath, sys.BuyerSecret, uids(), 1, "bench-bare-cap"), baseline.IsBare)
	}
	gateway := func(ctx context.Context, s loadgen.CapacitySearch) (*loadgen.CapacityReport, error) {
		return loadgen.FindCapacity(ctx, loadgen.Config{BaseURL: sys.APIURL, BuyerSecret: sys.BuyerSecret,
			MerchantSecret: sys.MerchantSecret, Timeout: requestTimeout, UIDBase: uids(),
			Progress: &prefixed{w: c.Log, prefix: "bench:   reservations, "}}, s)
	}
	return capacityRow(ctx, c, bare, gateway, logf, notes)
}

// capacityRow runs the bare handler's search, then the reservations', and makes the row:
// each side's rate is its search's capacity, its p99 and count those of the step at it.
func capacityRow(ctx context.Context, c *Config, bare, reservations capacitySearch, logf func(string, ...any),
	notes *[]string) (Row, *Capacity) {
	s := c.capacitySettings()
	label := "capacity at p99 <= " + dur(c.CapacityP99)
	row := Row{Label: label,
		Subject:  Measurement{Name: "reservations via the gateway, open loop", Unit: "/s"},
		Baseline: Measurement{Name: "bare go-zero handler, open loop", Unit: "/s"}}
	capy := &Capacity{P99Bound: c.CapacityP99, Budget: c.CapacityBudget}
	var errs []string
	logf("%s: the bare handler's search (steps of %s, at most %s)", label, s.Step, s.Budget)
	warmUp(ctx, s, "bare handler", bare, logf)
	rep, err := bare(ctx, s)
	capy.Baseline, row.Baseline = rep, atCapacity(row.Baseline, rep)
	if msg := searchError("bare handler", rep, err); msg != "" {
		errs = append(errs, msg)
	}
	if ctx.Err() == nil {
		logf("%s: the gateway's reservations' search (a fresh activity per step, at most %s)", label, s.Budget)
		warmUp(ctx, s, "reservations", reservations, logf)
		rep, err = reservations(ctx, s)
		capy.Subject, row.Subject = rep, atCapacity(row.Subject, rep)
	}
	if msg := searchError("reservations", rep, err); msg != "" {
		errs = append(errs, msg)
	}
	row.Error = strings.Join(errs, "; ")
	row.compute()
	row.P99Ratio = 0 // both p99s are within the bound by definition: their ratio says nothing
	*notes = append(*notes, fmt.Sprintf("%s: the highest constant arrival rate (open loop, latency from each "+
		"request's scheduled time, loadgen's capacity search: doubling, then bisecting to 10%%) with p99 <= %s and no "+
		"errors, in steps of %s, each search bounded by %s and after one uncounted warm-up step; the client runs "+
		"on the same cores, so the bare handler's capacity is partly the client's", label, dur(c.CapacityP99), c.CapacityStep,
		s.Budget))
	for _, r := range []*loadgen.CapacityReport{capy.Baseline, capy.Subject} {
		if r != nil && r.Capacity > 0 && r.Failing == 0 {
			*notes = append(*notes, fmt.Sprintf("%s: %s is a lower bound (no step failed: %s)", label, r.Target,
				r.Stopped))
		}
	}
	return row, capy
}

// warmUp runs one step of search at half the start rate and forgets it: the first requests
// of a path (connections, caches, a cold system when nothing ran before) are not its
// capacity. Its errors show again in the search proper.
func warmUp(ctx context.Context, s loadgen.CapacitySearch, name string, search capacitySearch,
	logf func(string, ...any)) {
	s.StartRate /= 2
	s.MaxRate, s.Budget = s.StartRate, time.Nanosecond // one step, whatever its verdict
	logf("capacity: warming the %s up, one step at %.0f/s, not counted", name, s.StartRate)
	_, _ = search(ctx, s)
}

// searchError is why a search gave no capacity ("" when it did).
func searchError(what string, rep *loadgen.CapacityReport, err error) string {
	switch {
	case err != nil:
		return what + ": " + err.Error()
	case rep == nil:
		return what + ": not searched"
	case rep.Capacity == 0:
		return what + ": no step passed (" + rep.Stopped + ")"
	}
	return ""
}

// atCapacity fills m from a search: its capacity, and the passing step at it.
func atCapacity(m Measurement, rep *loadgen.CapacityReport) Measurement {
	if rep == nil {
		return m
	}
	m.Rate = rep.Capacity
	for _, st := range rep.Steps {
		if st.Pass && st.Rate == rep.Capacity {
			m.Count, m.Elapsed, m.P50, m.P99 = st.Sent, st.Elapsed, st.Latency.P50, st.Latency.P99
		}
	}
	return m
}

// steps is a search in one line: each step's rate, p99 and verdict, then the capacity.
func (c *Capacity) writeText(w io.Writer) {
	fmt.Fprintf(w, "capacity at p99 <= %s, the searches' steps (rate p99 verdict):\n", dur(c.P99Bound))
	for _, side := range []struct {
		name string
		rep  *loadgen.CapacityReport
	}{{"bare handler", c.Baseline}, {"reservations", c.Subject}} {
		if side.rep == nil {
			continue
		}
		var parts []string
		for _, st := range side.rep.Steps {
			v := "ok"
			if !st.Pass {
				v = "FAIL"
				if st.Errors > 0 {
					v = fmt.Sprintf("FAIL(%d errors)", st.Errors)
				}
			}
			parts = append(parts, fmt.Sprintf("%s/s %s %s", group(st.Rate), dur(st.Latency.P99), v))
		}
		fmt.Fprintf(w, "  %s: %s -> %s (%s)\n", side.name, strings.Join(parts, ", "), capacityWords(side.rep),
			side.rep.Stopped)
	}
}

func capacityWords(r *loadgen.CapacityReport) string {
	switch {
	case r.Capacity == 0:
		return "none passed"
	case r.Failing == 0:
		return group(r.Capacity) + "/s or more"
	}
	return fmt.Sprintf("%s/s (%s/s failed)", group(r.Capacity), group(r.Failing))
}

// prefixed writes each line to w after prefix.
type prefixed struct {
	w      io.Writer
	prefix string
}

func (p *prefixed) Write(b []byte) (int, error) {
	lines := strings.SplitAfter(string(b), "\n")
	var out strings.Builder
	for _, l := range lines {
		if l != "" {
			out.WriteString(p.prefix + l)
		}
	}
	if _, err := io.WriteString(p.w, out.String()); err != nil {
		return 0, err
	}
	return len(b), nil
}
