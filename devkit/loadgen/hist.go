package loadgen

import (
	"math"
	"math/bits"
	"time"
)

// A LatencyHist counts latencies in log-linear buckets (128 per power of two, as
// HdrHistogram does with two significant digits): a million buyers' latencies in a fixed
// 35 KB instead of a slice of every sample. Below 128 ns each nanosecond is its own
// bucket; above, a bucket is under 0.8% of its value wide. Count, Min, Max and Mean are
// exact; a percentile is its nearest-rank sample's bucket, given as that bucket's highest
// value (clamped to Min..Max). Not safe for concurrent use (recorder locks it).
type LatencyHist struct {
	counts   [histBuckets]int64
	n        int64
	sum      time.Duration
	min, max time.Duration
}

const (
	histSubBits = 7
	histSub     = 1 << histSubBits
	// Octaves above the linear range: up to 2^40 ns (18 minutes); longer lands in the last.
	histOctaves = 40 - histSubBits
	histBuckets = (histOctaves + 1) * histSub
)

// histIndex is the bucket of v (>= 0).
func histIndex(v time.Duration) int {
	u := uint64(max(v, 0))
	if u < histSub {
		return int(u)
	}
	shift := bits.Len64(u) - histSubBits - 1
	i := (shift+1)*histSub + int(u>>uint(shift)) - histSub
	return min(i, histBuckets-1)
}

// histBounds is bucket i's range [lo, hi).
func histBounds(i int) (lo, hi time.Duration) {
	if i < histSub {
		return time.Duration(i), time.Duration(i + 1)
	}
	shift := uint(i/histSub - 1)
	top := uint64(i%histSub + histSub)
	return time.Duration(top << shift), time.Duration((top + 1) << shift)
}

// Add counts one latency.
func (h *LatencyHist) Add(d time.Duration) {
	d = max(d, 0)
	if h.n == 0 || d < h.min {
		h.min = d
	}
	h.max = max(h.max, d)
	h.n++
	h.sum += d
	h.counts[histIndex(d)]++
}

// Count is how many latencies were added.
func (h *LatencyHist) Count() int { return int(h.n) }

// Percentile is the nearest-rank q-th percentile (0 < q <= 100), to the bucket's width.
func (h *LatencyHist) Percentile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := min(max(int64(math.Ceil(q/100*float64(h.n))), 1), h.n)
	var seen int64
	for i, c := range h.counts {
		if seen += c; seen >= rank {
			_, hi := histBounds(i)
			return min(max(hi-1, h.min), h.max)
		}
	}
	return h.max
}

// Summary is the Latency of what was added.
func (h *LatencyHist) Summary() Latency {
	if h.n == 0 {
		return Latency{}
	}
	return Latency{Count: int(h.n), Min: h.min, Max: h.max, Mean: h.sum / time.Duration(h.n),
		P50: h.Percentile(50), P95: h.Percentile(95), P99: h.Percentile(99)}
}

// Buckets regroups the counts into n bars of geometrically growing bounds from Min to Max,
// as Histogram does with samples: each fine bucket goes whole to the bar holding its
// middle (clamped to Min..Max), so every latency is in exactly one bar.
func (h *LatencyHist) Buckets(n int) []Bucket {
	if h.n == 0 || n < 1 {
		return nil
	}
	bars, place := geometricBuckets(h.min, h.max, n)
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		lo, hi := histBounds(i)
		mid := min(max(lo+(hi-lo)/2, h.min), h.max)
		bars[place(mid)].Count += int(c)
	}
	return bars
}
