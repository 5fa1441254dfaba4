package loadgen

import (
	"strings"
	"testing"
	"time"
)

// TestPercentileLabelsDoNotOverlap: the percentile labels of the latency histogram never
// overprint each other, however close the percentiles are, and stay inside the chart.
func TestPercentileLabelsDoNotOverlap(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []float64
	}{
		{"all equal", []float64{300, 300, 300, 300}},
		{"close", []float64{200, 204, 208, 215}},
		{"tail at the right edge", []float64{500, padL + plotW - 2, padL + plotW - 1, padL + plotW}},
		{"spread", []float64{100, 300, 500, 700}},
	} {
		texts := []string{"p50 1.234ms", "p95 12.345ms", "p99 23.456ms", "max 123.456ms"}
		boxes := placeLabels(tc.xs, texts)
		for i, a := range boxes {
			if a.Left < 0 || a.Right > chartW || a.Y > padT+plotH {
				t.Errorf("%s: label %q outside the chart: %+v", tc.name, texts[i], a)
			}
			for j, b := range boxes[:i] {
				if a.Y == b.Y && a.Left < b.Right && b.Left < a.Right {
					t.Errorf("%s: %q overlaps %q: %+v %+v", tc.name, texts[i], texts[j], a, b)
				}
			}
		}
	}
	// And in the page: four distinct label lines for four equal percentiles.
	lat := Latency{P50: time.Millisecond, P95: time.Millisecond, P99: time.Millisecond, Max: time.Millisecond}
	svg := histogramSVG([]Bucket{{Lo: 500 * time.Microsecond, Hi: 2 * time.Millisecond, Count: 10}}, lat)
	for _, y := range []string{`y="32.0"`, `y="45.0"`, `y="58.0"`, `y="71.0"`} {
		if !strings.Contains(svg, y) {
			t.Errorf("no label line at %s in\n%s", y, svg)
		}
	}
}
