package loadgen

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"time"
)

// WriteHTML writes the report as one self-contained HTML page: tables plus inline SVG
// charts (latency histogram, throughput per second); no scripts, no external files.
func (r *Report) WriteHTML(w io.Writer) error {
	return page.Execute(w, map[string]any{
		"R":          r,
		"Histogram":  template.HTML(histogramSVG(r.Histogram, r.Latency)),
		"Throughput": template.HTML(throughputSVG(r.Timeline)),
		"Text":       r.text(),
	})
}

func (r *Report) text() string {
	var b strings.Builder
	r.WriteText(&b)
	return b.String()
}

const (
	chartW, chartH  = 880, 300
	padL, padR      = 60, 20
	padT, padB      = 20, 50
	plotW, plotH    = chartW - padL - padR, chartH - padT - padB
	colorReserved   = "#2e7d32"
	colorSoldOut    = "#9e9e9e"
	colorErrors     = "#c62828"
	colorBar        = "#1565c0"
	colorPercentile = "#ef6c00"
	svgOpen         = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" ` +
		`font-family="sans-serif" font-size="11">`
	svgAxisLabelFormat = `<text x="%.1f" y="%.1f" text-anchor="%s"%s>%s</text>`
)

// histogramSVG draws the latency buckets (log-spaced) with a line at each percentile.
func histogramSVG(buckets []Bucket, lat Latency) string {
	if len(buckets) == 0 {
		return "<p>no samples</p>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, svgOpen, chartW, chartH, chartW, chartH)
	maxCount := 1
	for _, bk := range buckets {
		maxCount = max(maxCount, bk.Count)
	}
	axes(&b, maxCount, "requests")
	bw := float64(plotW) / float64(len(buckets))
	for i, bk := range buckets {
		h := float64(bk.Count) / float64(maxCount) * plotH
		x := padL + float64(i)*bw
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s – %s: %d</title></rect>`,
			x+0.5, padT+plotH-h, math.Max(bw-1, 1), h, colorBar, d(bk.Lo), d(bk.Hi), bk.Count)
		if i%5 == 0 {
			label(&b, x, padT+plotH+14, "start", d(bk.Lo))
		}
	}
	// Percentile lines, placed within their bucket on the same log scale.
	lo := float64(max(buckets[0].Hi/2, 1))
	pos := func(v time.Duration) float64 {
		for i, bk := range buckets {
			if v >= bk.Lo && v < bk.Hi {
				l, h := math.Max(float64(bk.Lo), lo), float64(bk.Hi)
				frac := 0.0
				if h > l && float64(v) > l {
					frac = math.Log(float64(v)/l) / math.Log(h/l)
				}
				return padL + (float64(i)+frac)*bw
			}
		}
		return padL + plotW
	}
	lines := []struct {
		name string
		v    time.Duration
	}{{"p50", lat.P50}, {"p95", lat.P95}, {"p99", lat.P99}, {"max", lat.Max}}
	xs, texts := make([]float64, len(lines)), make([]string, len(lines))
	for i, m := range lines {
		xs[i], texts[i] = pos(m.v), m.name+" "+d(m.v)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-dasharray="4 3"/>`, xs[i], padT, xs[i],
			padT+plotH, colorPercentile)
	}
	for i, p := range placeLabels(xs, texts) {
		label(&b, p.X, p.Y, p.Anchor, texts[i])
	}
	label(&b, padL+plotW/2, chartH-8, "middle", "latency (log-spaced buckets)")
	b.WriteString("</svg>")
	return b.String()
}

// Label geometry at font-size 11: an approximate glyph width and a line height.
const (
	charW  = 6.2
	lineH  = 13.0
	labelG = 4.0 // gap kept between two labels on one line
)

// labelBox is where a percentile label goes: its anchor point and its horizontal extent.
type labelBox struct {
	X, Y        float64
	Anchor      string
	Left, Right float64
}

// placeLabels puts each percentile's label beside its line (to the right, or to the left where
// it would leave the plot) on the first line from the top where it overlaps no label
// already placed: lines close together (p95, p99 and max often are) stack instead of
// overprinting each other.
func placeLabels(xs []float64, texts []string) []labelBox {
	out := make([]labelBox, len(xs))
	var placed []labelBox
	for i, x := range xs {
		w := float64(len([]rune(texts[i]))) * charW
		box := labelBox{X: x + 3, Anchor: "start", Left: x + 3, Right: x + 3 + w}
		if box.Right > padL+plotW {
			box = labelBox{X: x - 3, Anchor: "end", Left: x - 3 - w, Right: x - 3}
		}
		for line := 0; ; line++ {
			box.Y = padT + 12 + float64(line)*lineH
			free := true
			for _, p := range placed {
				if p.Y == box.Y && box.Left < p.Right+labelG && p.Left < box.Right+labelG {
					free = false
					break
				}
			}
			if free {
				break
			}
		}
		placed = append(placed, box)
		out[i] = box
	}
	return out
}

// throughputSVG stacks each second's outcomes: reserved, sold out, errors.
func throughputSVG(timeline []Second) string {
	if len(timeline) == 0 {
		return "<p>no samples</p>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, svgOpen, chartW, chartH, chartW, chartH)
	maxReq := 1
	for _, s := range timeline {
		maxReq = max(maxReq, s.Requests)
	}
	axes(&b, maxReq, "requests / s")
	bw := float64(plotW) / float64(len(timeline))
	step := max(1, len(timeline)/15)
	for i, s := range timeline {
		x := padL + float64(i)*bw
		y := float64(padT + plotH)
		for _, part := range []struct {
			n     int
			color string
			name  string
		}{{s.Reserved, colorReserved, "reserved"}, {s.SoldOut, colorSoldOut, "sold out"}, {s.Errors, colorErrors, "errors"}} {
			h := float64(part.n) / float64(maxReq) * plotH
			y -= h
			if part.n > 0 {
				fmt.Fprintf(&b,
					`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>second %d: %d %s</title></rect>`,
					x+0.5, y, math.Max(bw-1, 1), h, part.color, s.Second, part.n, part.name)
			}
		}
		if i%step == 0 {
			label(&b, x+bw/2, padT+plotH+14, "middle", fmt.Sprintf("%ds", s.Second))
		}
	}
	for i, l := range []struct{ color, name string }{{colorReserved, "reserved"}, {colorSoldOut, "sold out"},
		{colorErrors, "errors"}} {
		x := float64(padL + 10 + i*100)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="10" height="10" fill="%s"/>`, x, chartH-18, l.color)
		label(&b, x+14, chartH-9, "start", l.name)
	}
	label(&b, padL+plotW-4, chartH-9, "end", "seconds since the reserve phase began")
	b.WriteString("</svg>")
	return b.String()
}

// axes draws the plot frame and a y scale up to maxY.
func axes(b *strings.Builder, maxY int, name string) {
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`, padL, padT+plotH, padL+plotW, padT+plotH)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`, padL, padT, padL, padT+plotH)
	for i := 0; i <= 4; i++ {
		y := float64(padT+plotH) - float64(i)/4*plotH
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`, padL, y, padL+plotW, y)
		label(b, padL-4, y+4, "end", fmt.Sprintf("%d", int(math.Round(float64(maxY)*float64(i)/4))))
	}
	fmt.Fprintf(b, `<text x="14" y="%d" transform="rotate(-90 14 %d)" text-anchor="middle">%s</text>`, padT+plotH/2,
		padT+plotH/2, template.HTMLEscapeString(name))
}

func label(b *strings.Builder, x, y float64, anchor, text string) {
	fmt.Fprintf(b, svgAxisLabelFormat, x, y, anchor, "", template.HTMLEscapeString(text))
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"d":     d,
	"codes": FormatCounts,
	"mib":   mib,
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>seckill load test: activity {{.R.ActivityID}}</title>
<style>
body{font-family:sans-serif;margin:2em auto;max-width:920px;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.3em .7em;text-align:left}
.pass{color:#2e7d32;font-weight:bold}.fail{color:#c62828;font-weight:bold}.na{color:#777}
pre{background:#f5f5f5;padding:1em;overflow-x:auto;font-size:12px}
</style></head><body>
<h1>seckill load test {{if .R.OK}}<span class="pass">PASS</span>{{else}}<span class="fail">FAIL</span>{{end}}</h1>
<p>{{.R.Target}}, activity {{.R.ActivityID}}, started {{.R.Started.Format "2006-01-02 15:04:05 MST"}}:
{{.R.Buyers}} buyers, concurrency {{.R.Concurrency}}, quantity {{.R.Quantity}}, stock at start {{.R.StockAtStart}},
pay timeout {{.R.PayTimeout}} s.</p>
<h2>Reservations</h2>
<table>
<tr><th>requests</th><td>{{.R.Requests}} in {{d .R.ReserveDuration}} ({{printf "%.0f" .R.Throughput}}/s)</td></tr>
<tr><th>reserved</th><td>{{.R.Reserved}}</td></tr>
<tr><th>sold out</th><td>{{.R.SoldOut}}</td></tr>
<tr><th>other errors</th><td>{{codes .R.Errors}}</td></tr>
<tr><th>not sent (time bound)</th><td>{{.R.NotSent}}</td></tr>
{{if .R.Rate}}<tr><th>open loop</th><td>offered {{printf "%.0f" .R.Rate}} buyers/s,
at most {{.R.MaxInFlight}} in flight,
{{.R.Late}} late (waited for a slot); latency per buyer from its scheduled time</td></tr>{{end}}
<tr><th>latency</th><td>p50 {{d .R.Latency.P50}}, p95 {{d .R.Latency.P95}}, p99 {{d .R.Latency.P99}},
max {{d .R.Latency.Max}} (mean {{d .R.Latency.Mean}})</td></tr>
</table>
<h3>Latency histogram</h3>
{{.Histogram}}
<h3>Throughput over time</h3>
{{.Throughput}}
<h2>Settlement and verification</h2>
<table>
<tr><th>paid</th><td>{{.R.Pay.OK}} of {{.R.Pay.Requests}} ({{codes .R.Pay.Codes}}),
p99 {{d .R.Pay.Latency.P99}}</td></tr>
<tr><th>cancelled</th><td>{{.R.Cancel.OK}} of {{.R.Cancel.Requests}} ({{codes .R.Cancel.Codes}}),
p99 {{d .R.Cancel.Latency.P99}}</td></tr>
<tr><th>orders read back</th><td>{{codes .R.FinalStatuses}}</td></tr>
<tr><th>reconciliation</th><td>{{.R.Reconcile}} after {{d .R.ReconcileWait}}
{{- range .R.ReconcileDiffs}}<br>{{.}}{{end}}</td></tr>
<tr><th>Redis</th><td>{{with .R.FinalRedis}}remaining {{.Remaining}}, locked {{.Locked}}, sold {{.Sold}}
{{- else}}not warm{{end}}</td></tr>
<tr><th>MySQL</th><td>available {{.R.FinalDB.Remaining}}, locked {{.R.FinalDB.Locked}},
sold {{.R.FinalDB.Sold}}</td></tr>
</table>
{{with .R.Cost}}<h2>Cost</h2>
<p>{{.Reached}} of {{.Buyers}} buyers answered; the first readings at {{.Checkpoint}}.</p>
{{if .Processes}}<table><tr><th>process</th><th>at the checkpoint</th><th>at the end</th></tr>
{{range .Processes}}<tr><td>{{.Name}} (pid {{.PID}})</td>
<td>{{with .At}}RSS {{mib .RSS}}, CPU {{d .CPU}} after {{.Buyers}} buyers{{end}}</td>
<td>{{with .End}}RSS {{mib .RSS}}, CPU {{d .CPU}} after {{.Buyers}} buyers{{end}}</td>
</tr>{{end}}</table>{{end}}
{{with .Redis}}<table><tr><th>Redis</th><th>bytes</th><th>per order</th></tr>
{{with .End}}<tr><td>used_memory (less client buffers) growth over {{.Orders}} orders</td>{{end}}<td>{{.Growth}}</td>
<td>{{printf "%.0f" .PerOrder}}</td></tr>
{{range .Keys}}<tr><td>{{.Kind}}</td><td>{{.Bytes}}</td><td>{{printf "%.1f" .PerOrder}}</td></tr>{{end}}
</table>{{end}}
{{with .WriterLag}}<p>Writer lag after the reserve phase: {{d .Lag}} (caught up: {{.CaughtUp}}).</p>{{end}}
{{end}}
<h2>Checks</h2>
<table>
{{range .R.Checks}}<tr><td>{{if .Skip}}<span class="na">n/a</span>{{else if .OK}}<span class="pass">PASS</span>
{{- else}}<span class="fail">FAIL</span>{{end}}</td><td>{{.Name}}</td><td>{{.Detail}}</td></tr>
{{end}}</table>
{{range .R.Warnings}}<p class="fail">warning: {{.}}</p>{{end}}
<h2>Text report</h2>
<pre>{{.Text}}</pre>
</body></html>
`))
