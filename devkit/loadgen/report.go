package loadgen

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Books are an activity's counters in Redis (remaining) or MySQL (available).
type Books struct {
	Remaining int64 `json:"remaining"` // Redis remaining or MySQL available
	Locked    int64 `json:"locked"`
	Sold      int64 `json:"sold"`
}

// Ops summarizes requests of one kind (pay, cancel, order reads).
type Ops struct {
	Requests int            `json:"requests"`
	OK       int            `json:"ok"`
	Codes    map[string]int `json:"codes"` // outcome word -> count, CodeOK included
	Latency  Latency        `json:"latency"`
}

// Check is one verdict of the run.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Skip   bool   `json:"skipped,omitempty"` // not applicable to this run (Detail says why)
	Detail string `json:"detail"`
}

// Report is the outcome of one simulated sale.
type Report struct {
	Target      string    `json:"target"`
	ActivityID  int64     `json:"activity_id"`
	Created     bool      `json:"created"` // the run created the activity
	Started     time.Time `json:"started"`
	Buyers      int       `json:"buyers"`
	Concurrency int       `json:"concurrency"`
	// Rate > 0: an open-loop run (Config.Rate) at this offered rate (buyers/s), at most
	// MaxInFlight at once; Late buyers waited for a slot (the cap was hit), their wait in
	// their latency. Latency and Timeline are then per buyer, from its scheduled time.
	Rate        float64 `json:"offered_rate,omitempty"`
	MaxInFlight int     `json:"max_in_flight,omitempty"`
	Late        int     `json:"late,omitempty"`
	Quantity    int64   `json:"quantity"`
	PayTimeout  int64   `json:"pay_timeout_seconds"`
	// StockAtStart is Redis's remaining after warm-up: what the buyers competed for.
	StockAtStart int64 `json:"stock_at_start"`
	// LockedAtStart: units other buyers held before the run (0 for a fresh activity).
	LockedAtStart int64 `json:"locked_at_start"`

	// Reserve phase.
	ReserveDuration time.Duration  `json:"reserve_duration_ns"`
	Requests        int            `json:"requests"`  // reservation attempts sent, retries included
	NotSent         int            `json:"not_sent"`  // buyers not started within MaxDuration
	Reserved        int            `json:"reserved"`  // buyers holding an order
	SoldOut         int            `json:"sold_out"`  // buyers told SOLD_OUT
	Errors          map[string]int `json:"errors"`    // other final outcomes of buyers, by code
	Attempts        map[string]int `json:"attempts"`  // every attempt's outcome, by code
	Throughput      float64        `json:"rps"`       // attempts per second of the reserve phase
	Latency         Latency        `json:"latency"`   // of every reservation attempt
	Histogram       []Bucket       `json:"histogram"` // of the same
	Timeline        []Second       `json:"timeline"`  // attempts per second
	// EarliestExpire is the first expire_at (Unix s) of the run's reservations.
	EarliestExpire int64 `json:"earliest_expire_at"`
	LatestExpire   int64 `json:"latest_expire_at"`

	// Settle phase.
	Pay     Ops    `json:"pay"`
	PaidVia string `json:"paid_via"` // the buyer's pay route, or the provider's notification
	Cancel  Ops    `json:"cancel"`
	// Unsure counts the pays and cancels left BUSY or unanswered after every retry, by
	// what the read-back found ("paid: took effect", "paid: did not", ...).
	Unsure map[string]int `json:"unsure,omitempty"`

	// Verification.
	ExpiryWait     time.Duration  `json:"expiry_wait_ns"`
	OrderReads     Ops            `json:"order_reads"`
	FinalStatuses  map[string]int `json:"final_statuses"` // of the reserved orders, read back
	Reconcile      string         `json:"reconcile_status"`
	ReconcileDiffs []string       `json:"reconcile_diffs,omitempty"`
	ReconcileWait  time.Duration  `json:"reconcile_wait_ns"`
	FinalRedis     *Books         `json:"final_redis"` // nil when not warm
	FinalDB        Books          `json:"final_db"`

	// Cost: what the sale cost the system (Config.Cost), when asked.
	Cost *CostReport `json:"cost,omitempty"`

	Checks   []Check  `json:"checks"`
	Warnings []string `json:"warnings,omitempty"`
}

// OK reports whether every applicable check passed.
func (r *Report) OK() bool {
	for _, c := range r.Checks {
		if !c.Skip && !c.OK {
			return false
		}
	}
	return len(r.Checks) > 0
}

// Paid and Cancelled count the orders the run paid / cancelled successfully.
func (r *Report) Paid() int      { return r.Pay.OK }
func (r *Report) Cancelled() int { return r.Cancel.OK }

func (r *Report) check(name string, ok bool, format string, args ...any) {
	r.Checks = append(r.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
}

func (r *Report) skip(name, format string, args ...any) {
	r.Checks = append(r.Checks, Check{Name: name, Skip: true, Detail: fmt.Sprintf(format, args...)})
}

// WriteText prints the report for a terminal.
func (r *Report) WriteText(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("seckill load test against %s, activity %d (%s)", r.Target, r.ActivityID, map[bool]string{true: "created",
		false: "reused"}[r.Created])
	p("  buyers %d, concurrency %d, quantity %d, stock at start %d, pay timeout %ds",
		r.Buyers, r.Concurrency, r.Quantity, r.StockAtStart, r.PayTimeout)
	p("reserve phase: %s", r.ReserveDuration.Round(time.Millisecond))
	if r.Rate > 0 {
		p("  open loop  offered %.0f buyers/s, at most %d in flight, late %d (waited for a slot); "+
			"latency per buyer from its scheduled time", r.Rate, r.MaxInFlight, r.Late)
	}
	p("  requests   %d (%.0f/s)", r.Requests, r.Throughput)
	p("  reserved   %d", r.Reserved)
	p("  sold out   %d", r.SoldOut)
	if len(r.Errors) > 0 {
		p("  errors     %s", FormatCounts(r.Errors))
	}
	if r.NotSent > 0 {
		p("  not sent   %d (time bound reached)", r.NotSent)
	}
	if retried := r.Requests - (r.Buyers - r.NotSent); retried > 0 {
		p("  attempts   %s", FormatCounts(r.Attempts))
	}
	p("  latency    p50 %s  p95 %s  p99 %s  max %s  (mean %s, n=%d)",
		d(r.Latency.P50), d(r.Latency.P95), d(r.Latency.P99), d(r.Latency.Max), d(r.Latency.Mean), r.Latency.Count)
	if len(r.Timeline) > 0 {
		var parts []string
		for _, s := range r.Timeline {
			parts = append(parts, fmt.Sprintf("%d", s.Requests))
		}
		p("  per second %s", strings.Join(parts, " "))
	}
	p("settle: paid %d/%d through %s (%s, p99 %s), cancelled %d/%d (%s, p99 %s)",
		r.Pay.OK, r.Pay.Requests, r.PaidVia, FormatCounts(r.Pay.Codes), d(r.Pay.Latency.P99),
		r.Cancel.OK, r.Cancel.Requests, FormatCounts(r.Cancel.Codes), d(r.Cancel.Latency.P99))
	if len(r.Unsure) > 0 {
		p("  unanswered after every retry (BUSY or no answer; either outcome is right): %s", FormatCounts(r.Unsure))
	}
	p("expiry wait %s; orders read back: %s", r.ExpiryWait.Round(time.Millisecond), FormatCounts(r.FinalStatuses))
	p("reconcile: %s after %s", r.Reconcile, r.ReconcileWait.Round(time.Millisecond))
	for _, diff := range r.ReconcileDiffs {
		p("  diff: %s", diff)
	}
	if r.FinalRedis != nil {
		p("redis: remaining %d locked %d sold %d", r.FinalRedis.Remaining, r.FinalRedis.Locked, r.FinalRedis.Sold)
	} else {
		p("redis: not warm")
	}
	p("mysql: available %d locked %d sold %d", r.FinalDB.Remaining, r.FinalDB.Locked, r.FinalDB.Sold)
	if r.Cost != nil {
		r.Cost.writeText(p)
	}
	for _, w := range r.Warnings {
		p("warning: %s", w)
	}
	p("checks:")
	for _, c := range r.Checks {
		mark := "PASS"
		switch {
		case c.Skip:
			mark = "n/a "
		case !c.OK:
			mark = "FAIL"
		}
		p("  %s %-34s %s", mark, c.Name, c.Detail)
	}
	if r.OK() {
		p("result: PASS")
	} else {
		p("result: FAIL")
	}
}

func d(x time.Duration) string {
	switch {
	case x >= time.Second:
		return x.Round(time.Millisecond).String()
	case x >= time.Millisecond:
		return x.Round(10 * time.Microsecond).String()
	default:
		return x.Round(time.Microsecond).String()
	}
}

// FormatCounts prints counts by name, largest first, zeros left out ("none" when
// nothing is left): errors by code, orders by state, outcomes of a baseline.
func FormatCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v != 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "none"
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
