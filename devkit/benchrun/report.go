package benchrun

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/seckill/seckill/devkit/loadgen"
)

// Profile is the named set of settings every measured server ran with.
type Profile struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Machine is where the numbers come from.
type Machine struct {
	NumCPU     int    `json:"nproc"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPU        string `json:"cpu,omitempty"`
	OS         string `json:"os"`
	Go         string `json:"go"`
}

// Settings are the bounds of the run.
type Settings struct {
	Concurrency int           `json:"concurrency"`
	Requests    int           `json:"requests"`        // per HTTP measurement (count bound)
	MaxDuration time.Duration `json:"max_duration_ns"` // per HTTP measurement (time bound)
	StockN      int           `json:"stock_benchtime_n"`
	WriterN     int           `json:"writer_benchtime_n"`
}

// Measurement is one side of a row.
type Measurement struct {
	Name string  `json:"name"`
	Rate float64 `json:"rate_per_s"` // well-formed outcomes (or benchmark ops) per second
	Unit string  `json:"unit"`
	// Count is what the rate counts: well-formed responses, or the benchmark's b.N.
	Count   int                `json:"count"`
	Other   map[string]int     `json:"other,omitempty"` // responses that did not count, by outcome
	NotSent int                `json:"not_sent,omitempty"`
	Elapsed time.Duration      `json:"elapsed_ns,omitempty"`
	P50     time.Duration      `json:"p50_ns,omitempty"`
	P99     time.Duration      `json:"p99_ns,omitempty"`
	NsPerOp float64            `json:"ns_per_op,omitempty"`
	Metrics map[string]float64 `json:"metrics,omitempty"` // a Go benchmark's reported metrics
}

// OtherCount is how many responses did not count.
func (m Measurement) OtherCount() int {
	n := 0
	for _, v := range m.Other {
		n += v
	}
	return n
}

// Row is a measurement beside its baseline.
type Row struct {
	Label    string      `json:"label"`
	Subject  Measurement `json:"subject"`
	Baseline Measurement `json:"baseline"`
	// Ratio is subject rate / baseline rate: 0.25 means a quarter of the baseline's
	// throughput, 8 eight times it.
	Ratio float64 `json:"ratio"`
	// P99Ratio is subject p99 / baseline p99 (HTTP rows).
	P99Ratio float64 `json:"p99_ratio,omitempty"`
	Error    string  `json:"error,omitempty"` // the row could not be measured
	// Detail says more of what was measured (the production profile's rows: the profile
	// and every setting changed from deploy/'s files).
	Detail string `json:"detail,omitempty"`
	// Rounds: each round's ratio, in the order measured, when the row was measured in
	// several rounds (Config.Rounds; in each round subject and baseline run back to back).
	// Ratio is then their median, and Subject, Baseline and P99Ratio are the median round's.
	Rounds []float64 `json:"round_ratios,omitempty"`
	// Metrics are the row's own figures beside the ratios (the "sale vs bare" row: both p99s and
	// both sides' CPU per answer).
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// medianRow is the median round of rows measured in rounds (the lower of the middle two
// for an even count), with every round's ratio; the first failed round when one failed.
func medianRow(rounds []Row) Row {
	if len(rounds) == 0 {
		return Row{}
	}
	for _, r := range rounds {
		if r.Error != "" {
			return r
		}
	}
	ratios := make([]float64, len(rounds))
	for i, r := range rounds {
		ratios[i] = r.Ratio
	}
	sorted := slices.Clone(rounds)
	slices.SortStableFunc(sorted, func(a, b Row) int { return cmp.Compare(a.Ratio, b.Ratio) })
	m := sorted[(len(sorted)-1)/2]
	if len(rounds) > 1 {
		m.Rounds = ratios
	}
	return m
}

func (r *Row) compute() {
	if r.Baseline.Rate > 0 {
		r.Ratio = r.Subject.Rate / r.Baseline.Rate
	}
	if r.Baseline.P99 > 0 && r.Subject.P99 > 0 {
		r.P99Ratio = float64(r.Subject.P99) / float64(r.Baseline.P99)
	}
}

// Sale is the verdict of the load generator's sale (its checks: no oversell, every order
// paid and read back, reconciliation consistent, Redis and MySQL agree).
type Sale struct {
	ActivityID int64    `json:"activity_id"`
	OK         bool     `json:"ok"`
	Failed     []string `json:"failed_checks,omitempty"`
	Reconcile  string   `json:"reconcile"`
}

// Result is one `make bench` run.
type Result struct {
	Profile  Profile       `json:"profile"`
	Machine  Machine       `json:"machine"`
	Settings Settings      `json:"settings"`
	Started  time.Time     `json:"started"`
	Took     time.Duration `json:"took_ns"`
	Rows     []Row         `json:"rows"`
	Sale     *Sale         `json:"sale,omitempty"`
	Degrade  *Degrade      `json:"degrade,omitempty"`
	Capacity *Capacity     `json:"capacity,omitempty"`
	Notes    []string      `json:"notes"`
}

// WriteJSON writes the result as indented JSON.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// WriteText prints the compact table.
func (r *Result) WriteText(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("seckill bench, profile %q: %s", r.Profile.Name, r.Profile.Description)
	cpu := ""
	if r.Machine.CPU != "" {
		cpu = ", " + r.Machine.CPU
	}
	p("machine: nproc %d, GOMAXPROCS %d%s, %s, %s; took %s", r.Machine.NumCPU, r.Machine.GOMAXPROCS, cpu,
		r.Machine.OS, r.Machine.Go, r.Took.Round(time.Second))
	p("HTTP load: loopback, %d concurrent keep-alive clients, at most %d requests or %s per measurement",
		r.Settings.Concurrency, r.Settings.Requests, r.Settings.MaxDuration)
	p("")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "measurement\trate\tp99\tbaseline\trate\tp99\tratio\t")
	for _, row := range r.Rows {
		if row.Error != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t%s\t-\t-\tnot measured\t\n", row.Subject.Name, row.Baseline.Name)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			row.Subject.Name, rate(row.Subject), dur(row.Subject.P99),
			row.Baseline.Name, rate(row.Baseline), dur(row.Baseline.P99), ratio(row.Ratio))
	}
	_ = tw.Flush()
	p("")
	for _, row := range r.Rows {
		if row.Error != "" {
			p("%s: not measured: %s", row.Label, row.Error)
			continue
		}
		p("%s: %s", row.Label, detail(row))
		if row.Detail != "" {
			p("  %s", row.Detail)
		}
		if len(row.Metrics) > 0 {
			p("  metrics: %s", metrics(row.Metrics))
		}
	}
	if r.Degrade != nil && len(r.Degrade.Points) > 0 {
		p("")
		r.Degrade.writeText(w)
	}
	if r.Capacity != nil {
		p("")
		r.Capacity.writeText(w)
	}
	if r.Sale != nil {
		verdict := "PASS"
		if !r.Sale.OK {
			verdict = "FAIL (" + strings.Join(r.Sale.Failed, "; ") + ")"
		}
		p("the sale (activity %d): load generator checks %s, reconciliation %s", r.Sale.ActivityID, verdict, r.Sale.Reconcile)
	}
	for _, n := range r.Notes {
		p("note: %s", n)
	}
}

// detail is a row's counts and the ratio in words.
func detail(row Row) string {
	var parts []string
	for _, m := range []Measurement{row.Subject, row.Baseline} {
		s := fmt.Sprintf("%s counted %d", m.Name, m.Count)
		if m.Elapsed > 0 {
			s += " in " + m.Elapsed.Round(time.Millisecond).String()
		}
		if m.Elapsed > 0 || len(m.Other) > 0 {
			s += ", other " + loadgen.FormatCounts(m.Other)
		}
		if m.NotSent > 0 {
			s += fmt.Sprintf(", %d not sent (time bound)", m.NotSent)
		}
		if v, ok := m.Metrics["events/tx"]; ok {
			s += fmt.Sprintf(", %.1f events/tx", v)
		}
		parts = append(parts, s)
	}
	words := fmt.Sprintf("ratio %s of the baseline's rate", ratio(row.Ratio))
	if len(row.Rounds) > 1 {
		rs := make([]string, len(row.Rounds))
		for i, r := range row.Rounds {
			rs[i] = ratio(r)
		}
		words = fmt.Sprintf("ratio %s of the baseline's rate, the median of %d rounds (%s; the counts are the median "+
			"round's)",
			ratio(row.Ratio), len(row.Rounds), strings.Join(rs, ", "))
	}
	if row.P99Ratio > 0 {
		words += fmt.Sprintf(", p99 %s of its p99", ratio(row.P99Ratio))
	}
	return strings.Join(parts, "; ") + "; " + words
}

// metrics prints a row's metrics by name.
func metrics(m map[string]float64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func rate(m Measurement) string {
	if m.Rate <= 0 {
		return "0/s"
	}
	switch {
	case m.Unit == "":
		return group(m.Rate) + "/s"
	case strings.HasPrefix(m.Unit, "/"):
		return group(m.Rate) + m.Unit
	default:
		return group(m.Rate) + " " + m.Unit
	}
}

// group prints a rate with thousands separators (one decimal below 100).
func group(v float64) string {
	if v < 100 {
		return fmt.Sprintf("%.1f", v)
	}
	s := fmt.Sprintf("%.0f", math.Round(v))
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func dur(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	default:
		return d.Round(time.Microsecond).String()
	}
}

func ratio(x float64) string {
	switch {
	case x <= 0 || math.IsInf(x, 0) || math.IsNaN(x):
		return "-"
	case x < 10:
		return fmt.Sprintf("%.2fx", x)
	default:
		return fmt.Sprintf("%.1fx", x)
	}
}

// writeText prints the semaphore sweep.
func (d *Degrade) writeText(w io.Writer) {
	fmt.Fprintf(w,
		"degrade mode (MySQL book), one burst per semaphore size: %d concurrent buyers for %s (at most %d buyers), one "+
			"attempt each, lease %d ms\n",
		d.Clients, d.MaxDuration, d.Requests, d.LeaseMs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw,
		"semaphore\treserved/s\tvs Redis (rate)\tp50\tp99\tsent\tBUSY\tsemaphore / gateway breaker / zRPC deadline / "+
			"other\tother answers\tMySQL threads running max/mean\trow lock waits\trow lock time\tsold after "+
			"cut\texactly-once\t")
	for _, pt := range d.Points {
		if pt.Error != "" {
			fmt.Fprintf(tw, "%d\tnot measured: %s\t\t\t\t\t\t\t\t\t\t\t\n", pt.Concurrency, firstLine(pt.Error))
			continue
		}
		verdict := "ok"
		if len(pt.Failed) > 0 {
			verdict = "FAIL: " + strings.Join(pt.Failed, "; ")
		}
		vs := "-"
		if pt.RedisRate > 0 {
			vs = ratio(pt.Rate / pt.RedisRate)
		}
		other := "0"
		if sumCounts(pt.Other) > 0 {
			other = loadgen.FormatCounts(pt.Other)
		}
		fmt.Fprintf(tw,
			"%d\t%s\t%s\t%s\t%s\t%d\t%d (%.0f%%)\t%d / %d / %d / %d\t%s\t%d / %.1f\t%d\t%d ms\t%s\t%s (%d orders: %d "+
				"answered + %d late, %d replayed)\t\n",
			pt.Concurrency, group(pt.Rate), vs+" ("+group(pt.RedisRate)+"/s)", dur(pt.P50), dur(pt.P99), pt.Sent,
			pt.Busy, 100*pt.BusyShare(),
			pt.BusyBy[BusySemaphore], pt.BusyBy[BusyGateway], pt.BusyBy[BusyDeadline], pt.BusyBy[BusyOther], other,
			pt.MySQL.ThreadsRunningMax, pt.MySQL.ThreadsRunningMean, pt.MySQL.RowLockWaits, pt.MySQL.RowLockTimeMs,
			dur(pt.SwitchWait), verdict, pt.Book.Live, pt.Book.Answered-pt.Book.Missing, pt.Book.Late, pt.Book.Replayed)
	}
	_ = tw.Flush()
}

func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
