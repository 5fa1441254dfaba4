package loadgen

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"
)

// Every value lies in its bucket's bounds, the buckets tile the line without gaps, and a
// bucket above the linear range is under 1/128 of its value wide.
func TestHistBuckets(t *testing.T) {
	for i := 0; i < histBuckets-1; i++ {
		lo, hi := histBounds(i)
		nlo, _ := histBounds(i + 1)
		if hi != nlo || hi <= lo {
			t.Fatalf("bucket %d = [%d, %d), next starts at %d", i, lo, hi, nlo)
		}
		if i >= histSub && float64(hi-lo) > float64(lo)/histSub {
			t.Fatalf("bucket %d = [%d, %d) is wider than 1/%d of its value", i, lo, hi, histSub)
		}
		for _, v := range []time.Duration{lo, hi - 1, lo + (hi-lo)/2} {
			if got := histIndex(v); got != i {
				t.Fatalf("histIndex(%d) = %d, want %d (bounds [%d, %d))", v, got, i, lo, hi)
			}
		}
	}
	if histIndex(-5) != 0 || histIndex(100*time.Hour) != histBuckets-1 {
		t.Fatal("values outside the range are not clamped to the end buckets")
	}
	if size := unsafe.Sizeof(LatencyHist{}); size > 64<<10 {
		t.Fatalf("a LatencyHist is %d bytes", size)
	}
}

// The histogram's summary matches the exact one of the same samples: count, min, max and
// mean exactly, each percentile within its bucket's width (0.8%) above the exact one.
func TestHistMatchesSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 7, 100, 50_000} {
		samples := make([]time.Duration, n)
		var h LatencyHist
		for i := range samples {
			// Log-normal around 2 ms, with a tail into seconds.
			samples[i] = time.Duration(math.Exp(rng.NormFloat64()*1.5) * float64(2*time.Millisecond))
			h.Add(samples[i])
		}
		got, want := h.Summary(), Summarize(samples)
		if got.Count != want.Count || got.Min != want.Min || got.Max != want.Max || got.Mean != want.Mean {
			t.Fatalf("n=%d: summary %+v, exact %+v", n, got, want)
		}
		for _, q := range []float64{0.1, 50, 95, 99, 99.9, 100} {
			g, w := h.Percentile(q), Percentile(samples, q)
			if g < w || float64(g-w) > float64(w)/histSub {
				t.Errorf("n=%d: p%g = %s, exact %s", n, q, g, w)
			}
		}
		bars := h.Buckets(40)
		total := 0
		for _, b := range bars {
			total += b.Count
		}
		if len(bars) != 40 || total != n || bars[0].Lo != 0 || bars[39].Hi <= want.Max {
			t.Fatalf("n=%d: %d bars holding %d samples, first from %s, last to %s", n, len(bars), total, bars[0].Lo, bars[39].Hi)
		}
	}
	var empty LatencyHist
	if (empty.Summary() != Latency{}) || empty.Buckets(40) != nil || empty.Percentile(99) != 0 {
		t.Fatal("an empty histogram is not zero")
	}
}

// Many buyers' latencies cost the recorder nothing more than a few: it keeps no sample,
// only the histogram.
func TestRecorderMany(t *testing.T) {
	start := time.Now()
	r := newRecorder(start)
	for i := range 200_000 {
		r.add(start.Add(time.Duration(i)*time.Microsecond), time.Duration(i%5000)*time.Microsecond, CodeSoldOut)
	}
	lat, codes, tl := r.snapshot()
	s := lat.Summary()
	if s.Count != 200_000 || codes[CodeSoldOut] != 200_000 || len(tl) != 1 || tl[0].SoldOut != 200_000 {
		t.Fatalf("summary %+v, codes %v, %d seconds", s, codes, len(tl))
	}
	if s.P50 < 2499*time.Microsecond || s.P50 > 2521*time.Microsecond || s.Max != 4999*time.Microsecond {
		t.Fatalf("p50 %s max %s, want about 2.5ms and 4.999ms", s.P50, s.Max)
	}
}
