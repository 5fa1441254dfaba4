package loadgen

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"
	"time"
)

// WriteText prints the search for a terminal: every step, then the capacity found.
func (r *CapacityReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "capacity search against %s: p99 <= %s, no errors; steps of %s, open loop, at most %d in flight\n",
		r.Target, d(r.P99Bound), r.Step, r.MaxInFlight)
	for i, st := range r.Steps {
		fmt.Fprintf(w, "  step %2d %s\n", i+1, st.line())
	}
	fmt.Fprintf(w, "capacity: %s (%s)\n", r.summary(), r.Stopped)
}

func (r *CapacityReport) summary() string {
	switch {
	case r.Capacity == 0:
		return "none: no step passed"
	case r.Failing == 0:
		return fmt.Sprintf("%.0f reservations/s or more", r.Capacity)
	}
	return fmt.Sprintf("%.0f reservations/s (%.0f/s failed)", r.Capacity, r.Failing)
}

// WriteHTML writes the search as one self-contained page: p99 against the offered rate
// (inline SVG, as the sale's report) and the steps' table.
func (r *CapacityReport) WriteHTML(w io.Writer) error {
	return capacityPage.Execute(w, map[string]any{
		"R":       r,
		"Summary": r.summary(),
		"Chart":   template.HTML(p99RateSVG(r.Steps, r.P99Bound, r.Capacity)),
	})
}

// p99RateSVG plots each step's p99 (y, linear, clipped at a few times the bound) against
// its offered rate (x, log scale), passing steps green and failing red, with the bound
// as a line and the capacity marked.
func p99RateSVG(steps []CapacityStep, bound time.Duration, capacity float64) string {
	if len(steps) == 0 {
		return "<p>no steps</p>"
	}
	sorted := append([]CapacityStep(nil), steps...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Rate < sorted[j].Rate })
	loR, hiR := sorted[0].Rate/1.5, sorted[len(sorted)-1].Rate*1.5
	yMax := 2 * bound
	for _, st := range sorted {
		yMax = max(yMax, min(st.Latency.P99, 4*bound))
	}
	yMax = yMax * 11 / 10
	x := func(rate float64) float64 {
		return padL + math.Log(rate/loR)/math.Log(hiR/loR)*plotW
	}
	y := func(v time.Duration) float64 { return padT + plotH - float64(min(v, yMax))/float64(yMax)*plotH }
	var b strings.Builder
	fmt.Fprintf(&b, svgOpen, chartW, chartH, chartW, chartH)
	rateAxes(&b, loR, hiR, x)
	for i := 0; i <= 4; i++ {
		v := yMax * time.Duration(i) / 4
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>`, padL, y(v), padL+plotW, y(v))
		label(&b, padL-4, y(v)+4, "end", d(v))
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-dasharray="6 4"/>`,
		padL, y(bound), padL+plotW, y(bound), colorPercentile)
	label(&b, padL+plotW-4, y(bound)-4, "end", "p99 bound "+d(bound))
	if capacity > 0 {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-dasharray="4 3"/>`,
			x(capacity), padT, x(capacity), padT+plotH, colorReserved)
		label(&b, x(capacity)+4, padT+12, "start", fmt.Sprintf("capacity %.0f/s", capacity))
	}
	var path []string
	for _, st := range sorted {
		path = append(path, fmt.Sprintf("%.1f,%.1f", x(st.Rate), y(st.Latency.P99)))
	}
	fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s"/>`, strings.Join(path, " "), colorBar)
	for _, st := range sorted {
		color := colorReserved
		if !st.Pass {
			color = colorErrors
		}
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s"><title>%.0f/s: p99 %s, errors %d</title></circle>`,
			x(st.Rate), y(st.Latency.P99), color, st.Rate, d(st.Latency.P99), st.Errors)
	}
	fmt.Fprintf(&b, `<text x="14" y="%d" transform="rotate(-90 14 %d)" text-anchor="middle">p99</text>`,
		padT+plotH/2, padT+plotH/2)
	label(&b, padL+plotW/2, chartH-8, "middle", "offered rate, reservations/s (log scale)")
	b.WriteString("</svg>")
	return b.String()
}

// rateAxes draws the frame and the x ticks at 1, 2 and 5 times the powers of ten within
// lo..hi.
func rateAxes(b *strings.Builder, lo, hi float64, x func(float64) float64) {
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`, padL, padT+plotH, padL+plotW, padT+plotH)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`, padL, padT, padL, padT+plotH)
	for p := math.Pow(10, math.Floor(math.Log10(lo))); p <= hi; p *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if v := p * m; v >= lo && v <= hi {
				fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`, x(v), padT, x(v), padT+plotH)
				label(b, x(v), padT+plotH+14, "middle", fmt.Sprintf("%g", v))
			}
		}
	}
}

var capacityPage = template.Must(template.New("capacity").Funcs(template.FuncMap{
	"d":     d,
	"codes": FormatCounts,
	"inc":   func(i int) int { return i + 1 },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>seckill capacity search</title>
<style>
body{font-family:sans-serif;margin:2em auto;max-width:920px;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.3em .7em;text-align:left}
.pass{color:#2e7d32;font-weight:bold}.fail{color:#c62828;font-weight:bold}
</style></head><body>
<h1>seckill capacity search</h1>
<p>{{.R.Target}}, started {{.R.Started.Format "2006-01-02 15:04:05 MST"}}: the highest constant arrival rate of
reservations (open loop, latency from each request's scheduled time, at most {{.R.MaxInFlight}} in flight) with
p99 &le; {{d .R.P99Bound}} and no errors; steps of {{.R.Step}}, each on a fresh activity.</p>
<p><b>Capacity: {{.Summary}}</b> ({{.R.Stopped}}).</p>
<h2>p99 against the offered rate</h2>
{{.Chart}}
<h2>Steps</h2>
<table>
<tr><th>#</th><th>rate/s</th><th>p50</th><th>p99</th><th>max</th><th>errors</th><th>late</th><th>answers</th>
<th></th></tr>
{{range $i, $s := .R.Steps}}<tr><td>{{inc $i}}</td><td>{{printf "%.0f" $s.Rate}}</td><td>{{d $s.Latency.P50}}</td>
<td>{{d $s.Latency.P99}}</td><td>{{d $s.Latency.Max}}</td><td>{{$s.Errors}}</td><td>{{$s.Late}}</td>
<td>{{codes $s.Codes}}</td><td>{{if $s.Pass}}<span class="pass">pass</span>{{else}}<span class="fail">FAIL</span>{{end}}
</td></tr>
{{end}}</table>
</body></html>
`))
