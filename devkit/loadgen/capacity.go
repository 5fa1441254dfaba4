package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/seckill/seckill/devkit/apiclient"
)

// CapacitySearch bounds FindCapacity: the highest open-loop rate of reservations whose p99
// stays within P99Bound with no errors.
type CapacitySearch struct {
	P99Bound  time.Duration // default 50 ms
	StartRate float64       // the first step's rate, per second (default 100)
	MaxRate   float64       // the ramp stops here (default 200,000)
	Step      time.Duration // each step's schedule: ceil(rate*Step) reservations (default 3 s)
	Precision float64       // bisect until the failing rate ÷ the passing one <= 1+Precision (default 0.05)
	Budget    time.Duration // the whole search; when spent, the best rate so far (default 60 s)
	Rest      time.Duration // pause between steps, for the system to drain (default 500 ms)
}

func (s *CapacitySearch) defaults() {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&s.P99Bound, 50*time.Millisecond)
	def(&s.Step, 3*time.Second)
	def(&s.Budget, 60*time.Second)
	def(&s.Rest, 500*time.Millisecond)
	if s.StartRate <= 0 {
		s.StartRate = 100
	}
	if s.MaxRate <= 0 {
		s.MaxRate = 200_000
	}
	if s.Precision <= 0 {
		s.Precision = 0.05
	}
}

// CapacityStep is one bounded open-loop run of the search.
type CapacityStep struct {
	Rate       float64        `json:"rate"` // offered, reservations per second
	ActivityID int64          `json:"activity_id"`
	Requests   int            `json:"requests"` // scheduled
	Sent       int            `json:"sent"`
	Late       int            `json:"late"`    // waited for a slot (the in-flight cap was hit)
	Dropped    int            `json:"dropped"` // never sent: counted as errors
	Codes      map[string]int `json:"codes"`   // every answer's outcome
	Errors     int            `json:"errors"`  // answers other than 200, plus the dropped
	Latency    Latency        `json:"latency"` // from each request's scheduled time
	Elapsed    time.Duration  `json:"elapsed_ns"`
	Pass       bool           `json:"pass"` // no error and p99 <= the bound
}

// CapacityReport is a capacity search: its steps in order and the rate found.
type CapacityReport struct {
	Target      string         `json:"target"`
	Started     time.Time      `json:"started"`
	P99Bound    time.Duration  `json:"p99_bound_ns"`
	Step        time.Duration  `json:"step_ns"`
	MaxInFlight int            `json:"max_in_flight"`
	Steps       []CapacityStep `json:"steps"`
	// Capacity is the highest passing rate (0: none passed); Failing the lowest failing
	// rate above it (0: none failed, the ramp reached MaxRate or the budget).
	Capacity float64 `json:"capacity"`
	Failing  float64 `json:"failing"`
	Stopped  string  `json:"stopped"` // why the search ended
}

// CapacityTarget is what a capacity search drives: FindCapacity's is the reservation path
// of a running system; devkit/baseline's a bare server.
type CapacityTarget struct {
	Name        string // the report's target (a URL)
	MaxInFlight int    // the open loop's bound on requests in flight (default DefaultMaxInFlight)
	// Prepare readies one step of n requests (FindCapacity creates and warms a fresh
	// activity, whose id it returns) and returns the step's request i: it sends it and
	// returns its outcome, CodeOK for a success, anything else an error.
	Prepare func(ctx context.Context, n int) (id int64, do func(i int) string, err error)
	// Progress gets each step's line as the search runs (nil: none).
	Progress func(format string, args ...any)
}

// FindCapacity searches for the highest constant arrival rate of reservations the target
// takes with p99 <= s.P99Bound and no errors (SearchCapacity). Each step is a fresh activity
// (created and warmed, stock for every request, so SOLD_OUT never answers) and one
// open-loop run of buyers, none retried: BUSY, 5xx and transport errors count as errors.
// cfg gives the target, secrets, Quantity, Timeout, MaxInFlight and Progress; Buyers, Rate
// and the activity are the search's.
func FindCapacity(ctx context.Context, cfg Config, s CapacitySearch) (*CapacityReport, error) {
	s.defaults()
	if cfg.ActivityID != 0 {
		return nil, errors.New("the capacity search creates its own activities (one per step)")
	}
	if cfg.PayTimeout == 0 {
		cfg.PayTimeout = 10 * time.Minute // nothing expires during the search
	}
	cfg.Rate = max(cfg.Rate, s.StartRate)
	g, err := newRun(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer g.c.Close()
	uid := g.cfg.UIDBase
	return SearchCapacity(ctx, CapacityTarget{Name: g.cfg.BaseURL, MaxInFlight: g.cfg.openCap(), Progress: g.prog.phase,
		Prepare: func(ctx context.Context, n int) (int64, func(i int) string, error) {
			aid, do, err := g.capacityStep(ctx, n, uid)
			uid += int64(n)
			return aid, do, err
		}}, s)
}

// SearchCapacity is the capacity search, whatever the target: the rate doubles from
// s.StartRate until a step fails (halves until one passes, when the first fails), then
// bisects between the highest passing and the lowest failing rate. Each step is one
// open-loop run (Open) of ceil(rate*s.Step) requests, latency from each one's scheduled
// time; it passes with p99 <= s.P99Bound and every request CodeOK (a request not sent
// within twice the step is an error). When s.Budget is spent, the best rate so far.
func SearchCapacity(ctx context.Context, t CapacityTarget, s CapacitySearch) (*CapacityReport, error) {
	s.defaults()
	if t.MaxInFlight <= 0 {
		t.MaxInFlight = DefaultMaxInFlight
	}
	if t.Progress == nil {
		t.Progress = func(string, ...any) {}
	}
	rep := &CapacityReport{Target: t.Name, Started: time.Now(), P99Bound: s.P99Bound, Step: s.Step,
		MaxInFlight: t.MaxInFlight}
	deadline := rep.Started.Add(s.Budget)
	rate := s.StartRate
	for {
		st, err := t.step(ctx, rate, s)
		if err != nil {
			return rep, err
		}
		rep.Steps = append(rep.Steps, st)
		t.Progress("step %d: %s", len(rep.Steps), st.line())
		if st.Pass {
			rep.Capacity = max(rep.Capacity, rate)
		} else if rep.Failing == 0 || rate < rep.Failing {
			rep.Failing = rate
		}
		next, stop := nextRate(rep, rate, s)
		if stop == "" && time.Now().Add(s.Rest).After(deadline) {
			stop = fmt.Sprintf("budget of %s spent", s.Budget)
		}
		if stop != "" {
			rep.Stopped = stop
			return rep, ctx.Err()
		}
		sleep(ctx, s.Rest)
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		rate = next
	}
}

// nextRate is the search's next rate, or why it stops.
func nextRate(rep *CapacityReport, rate float64, s CapacitySearch) (float64, string) {
	lo, hi := rep.Capacity, rep.Failing
	switch {
	case hi == 0 && rate >= s.MaxRate:
		return 0, fmt.Sprintf("the maximum rate %.0f/s passed", s.MaxRate)
	case hi == 0:
		return min(2*rate, s.MaxRate), ""
	case lo == 0 && rate <= 1:
		return 0, "no rate passed, down to 1/s"
	case lo == 0:
		return rate / 2, ""
	case hi/lo-1 <= s.Precision:
		return 0, fmt.Sprintf("bracketed within %.0f%%", 100*s.Precision)
	}
	return math.Round((lo + hi) / 2), ""
}

// step prepares and runs one open-loop step at rate.
func (t CapacityTarget) step(ctx context.Context, rate float64, s CapacitySearch) (CapacityStep, error) {
	n := max(int(math.Ceil(rate*s.Step.Seconds())), 1)
	id, do, err := t.Prepare(ctx, n)
	if err != nil {
		return CapacityStep{}, err
	}
	start := time.Now()
	o := Open{N: n, Rate: rate, MaxInFlight: t.MaxInFlight, Start: start, Deadline: start.Add(2*s.Step + time.Second)}
	st := o.Run(ctx, do)
	step := CapacityStep{Rate: rate, ActivityID: id, Requests: n, Sent: st.Sent, Late: st.Late, Dropped: st.Dropped,
		Codes: st.Codes, Errors: st.Dropped + st.Sent - st.Codes[CodeOK], Latency: st.Latency.Summary(),
		Elapsed: st.Elapsed}
	step.Pass = step.Errors == 0 && step.Latency.P99 <= s.P99Bound
	return step, ctx.Err()
}

// capacityStep creates and warms a fresh activity for n reservations and returns it with
// reservation i of the buyers after uid.
func (g *run) capacityStep(ctx context.Context, n int, uid int64) (int64, func(i int) string, error) {
	g.cfg.ActivityID, g.cfg.Stock = 0, int64(n)*g.cfg.Quantity
	g.r = &Report{Errors: map[string]int{}}
	if err := g.setup(ctx); err != nil {
		return 0, nil, err
	}
	aid, tag := g.r.ActivityID, "lgc-"+g.id+"-"+strconv.FormatInt(uid, 36)+"-"
	return aid, func(i int) string {
		token, err := g.tokens.buyer(uid + int64(i) + 1)
		if err != nil {
			return "TOKEN_ERROR"
		}
		_, m, _ := g.c.Reserve(ctx, token, apiclient.ReserveBody(aid, g.cfg.Quantity, tag+strconv.Itoa(i)))
		return m.Code
	}, nil
}

// line is the step in one line: rate, p50, p99, errors, verdict.
func (st CapacityStep) line() string {
	verdict := "pass"
	if !st.Pass {
		verdict = "FAIL"
	}
	errs := "none"
	if st.Errors > 0 {
		bad := map[string]int{}
		for k, v := range st.Codes {
			if k != CodeOK {
				bad[k] = v
			}
		}
		if st.Dropped > 0 {
			bad["not sent"] = st.Dropped
		}
		errs = strconv.Itoa(st.Errors) + " (" + FormatCounts(bad) + ")"
	}
	return fmt.Sprintf("%8.0f/s  p50 %-9s p99 %-9s errors %s, late %d  %s",
		st.Rate, d(st.Latency.P50), d(st.Latency.P99), errs, st.Late, verdict)
}
