package loadgen

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/seckill/seckill/devkit/apiclient"
)

// DrawSale is one sale of a draw-mode run (DrawSeconds 0: the contrast without a draw).
type DrawSale struct {
	ActivityID  int64 `json:"activity_id"`
	DrawSeconds int64 `json:"draw_seconds"`
	Buyers      int   `json:"buyers"`
	Stock       int64 `json:"stock"` // Redis remaining after warm-up

	ArrivalDuration time.Duration  `json:"arrival_duration_ns"`
	Requests        int            `json:"requests"` // reservations sent, retries included
	Attempts        map[string]int `json:"attempts"` // every attempt's outcome, by code
	Latency         Latency        `json:"latency"`
	// Late: buyers of a draw whose reservations were all answered after the window (no
	// entry), by their last code; Errors: buyers with no accepted answer, by code.
	Late   map[string]int `json:"late,omitempty"`
	Errors map[string]int `json:"errors,omitempty"`

	Polls    Ops                 `json:"polls"`        // GET entries, from draw_at on
	DrawWait time.Duration       `json:"draw_wait_ns"` // from draw_at to the last outcome learnt
	Unknown  int                 `json:"unknown"`      // entrants whose outcome was never learnt
	Draw     *apiclient.DrawView `json:"draw,omitempty"`

	OrderStatuses  map[string]int `json:"order_statuses"` // every order read back as its buyer
	TwoOrders      int            `json:"two_orders"`     // buyers answered with two order numbers
	Reconcile      string         `json:"reconcile_status"`
	ReconcileDiffs []string       `json:"reconcile_diffs,omitempty"`
	FinalRedis     *Books         `json:"final_redis"`
	FinalDB        Books          `json:"final_db"`

	Fairness Fairness `json:"fairness"`
	Checks   []Check  `json:"checks"`
}

func (s *DrawSale) check(name string, ok bool, format string, args ...any) {
	s.Checks = append(s.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
}

// DrawReport is a draw-mode run: its draw sales, the contrast, the means and the fairness checks.
type DrawReport struct {
	Target        string        `json:"target"`
	Started       time.Time     `json:"started"`
	Buyers        int           `json:"buyers"`
	Stock         int64         `json:"stock"`
	DrawSeconds   int64         `json:"draw_seconds"`
	Seeds         int           `json:"seeds"`
	HeavyFraction float64       `json:"heavy_fraction"`
	HeavyRequests int           `json:"heavy_requests"`
	Concurrency   int           `json:"concurrency"`
	Arrival       time.Duration `json:"arrival_ns"`

	Sales    []*DrawSale `json:"sales"`
	Contrast *DrawSale   `json:"contrast"`
	// MeanEarly / MeanHeavy: the mean over the draw sales of each ratio.
	MeanEarly Ratio   `json:"mean_early_ratio"`
	MeanHeavy Ratio   `json:"mean_heavy_ratio"`
	Checks    []Check `json:"checks"`
}

// Fairness bounds of the issue: the mean early ratio within [FairLow, FairHigh], the mean
// heavy ratio at most FairHigh.
const (
	FairLow  = 0.9
	FairHigh = 1.1
)

// summarize computes the means and the fairness checks over the draw sales. A bound is
// checked only when a fair draw of this size keeps the mean within it (3 standard
// deviations ≤ 0.1); a smaller run's mean strays that far by chance and says so.
func (r *DrawReport) summarize() {
	var early, heavy []Ratio
	var vEarly, vHeavy float64
	for _, s := range r.Sales {
		f := s.Fairness
		early, heavy = append(early, f.EarlyRatio), append(heavy, f.HeavyRatio)
		vEarly += math.Pow(fairSpread(f.Early, f.Entrants, f.Winners), 2)
		vHeavy += math.Pow(fairSpread(f.Heavy, f.Entrants, f.Winners), 2)
	}
	r.MeanEarly, r.MeanHeavy = meanRatio(early), meanRatio(heavy)
	n := float64(len(r.Sales))
	sdEarly, sdHeavy := math.Sqrt(vEarly)/n, math.Sqrt(vHeavy)/n
	r.fairCheck("fair by arrival: mean earliest 10 % / rest", r.MeanEarly, sdEarly, true)
	r.fairCheck("fair by requests sent: mean heavy / light", r.MeanHeavy, sdHeavy, false)
}

func (r *DrawReport) fairCheck(name string, mean Ratio, sd float64, twoSided bool) {
	bound := fmt.Sprintf("<= %.1f", FairHigh)
	ok := float64(mean) <= FairHigh
	if twoSided {
		bound = fmt.Sprintf("within [%.1f, %.1f]", FairLow, FairHigh)
		ok = ok && float64(mean) >= FairLow
	}
	detail := fmt.Sprintf("%s over %d sales, want %s (a fair draw's mean: 1 ± %.3f, 1 σ)", mean, len(r.Sales), bound, sd)
	if math.IsNaN(sd) || 3*sd > FairHigh-1 {
		r.Checks = append(r.Checks, Check{Name: name, Skip: true,
			Detail: detail + ": too few entrants or seeds for the bound"})
		return
	}
	r.Checks = append(r.Checks, Check{Name: name, OK: ok && !math.IsNaN(float64(mean)), Detail: detail})
}

// OK reports whether every applicable check of every sale and of the run passed.
func (r *DrawReport) OK() bool {
	all := append([]Check(nil), r.Checks...)
	for _, s := range append(append([]*DrawSale(nil), r.Sales...), r.Contrast) {
		if s == nil {
			return false
		}
		all = append(all, s.Checks...)
	}
	for _, c := range all {
		if !c.Skip && !c.OK {
			return false
		}
	}
	return len(r.Sales) > 0
}

// WriteText prints the report for a terminal.
func (r *DrawReport) WriteText(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("seckill opening-draw test against %s: %d sales with a draw of %ds, then one without", r.Target, r.Seeds,
		r.DrawSeconds)
	p("  buyers %d (%.0f %% send %d reservations, the rest 1), stock %d, concurrency %d, arrivals over %s",
		r.Buyers, 100*r.HeavyFraction, r.HeavyRequests, r.Stock, r.Concurrency, r.Arrival)
	for i, s := range r.Sales {
		writeSale(p, fmt.Sprintf("sale %d", i+1), s)
	}
	if r.Contrast != nil {
		writeSale(p, "no draw", r.Contrast)
	}
	p("mean over %d draws: earliest 10 %% / rest %s, heavy / light %s", len(r.Sales), r.MeanEarly, r.MeanHeavy)
	if c := r.Contrast; c != nil {
		p("without a draw:     earliest 10 %% / rest %s, heavy / light %s", c.Fairness.EarlyRatio, c.Fairness.HeavyRatio)
	}
	writeChecks(p, r.Checks)
	if r.OK() {
		p("result: PASS")
	} else {
		p("result: FAIL")
	}
}

func writeSale(p func(string, ...any), name string, s *DrawSale) {
	f := s.Fairness
	p("%s: activity %d, draw %ds: %d entrants, %d winners; earliest 10 %% / rest %s (%d/%d vs %d/%d), "+
		"heavy / light %s (%d/%d vs %d/%d)", name, s.ActivityID, s.DrawSeconds, f.Entrants, f.Winners,
		f.EarlyRatio, f.EarlyWins, f.Early, f.RestWins, f.Rest, f.HeavyRatio, f.HeavyWins, f.Heavy, f.LightWins, f.Light)
	p("  arrivals %s: %d requests (%s), p50 %s p99 %s", s.ArrivalDuration.Round(time.Millisecond), s.Requests,
		FormatCounts(s.Attempts), d(s.Latency.P50), d(s.Latency.P99))
	if n := sum(s.Late); n > 0 {
		p("  after the window (no entry): %s", FormatCounts(s.Late))
		p("  warning: %d of %d buyers were answered only after the window (arrivals outpaced the system): "+
			"a longer -draw-seconds or fewer -buyers enters them all", n, s.Buyers)
	}
	if len(s.Errors) > 0 {
		p("  errors: %s", FormatCounts(s.Errors))
	}
	if s.DrawSeconds > 0 {
		p("  outcomes learnt %s after draw_at (%d polls: %s); draw view %+v", s.DrawWait.Round(time.Millisecond),
			s.Polls.Requests, FormatCounts(s.Polls.Codes), s.Draw)
	}
	p("  orders read back: %s; reconcile %s", FormatCounts(s.OrderStatuses), s.Reconcile)
	writeChecks(p, s.Checks)
}

func writeChecks(p func(string, ...any), checks []Check) {
	for _, c := range checks {
		mark := "PASS"
		switch {
		case c.Skip:
			mark = "n/a "
		case !c.OK:
			mark = "FAIL"
		}
		p("  %s %-34s %s", mark, c.Name, c.Detail)
	}
}
