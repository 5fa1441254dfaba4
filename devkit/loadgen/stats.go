package loadgen

import (
	"math"
	"sort"
	"sync"
	"time"
)

// Latency summarizes a set of request latencies.
type Latency struct {
	Count int           `json:"count"`
	Min   time.Duration `json:"min_ns"`
	Mean  time.Duration `json:"mean_ns"`
	P50   time.Duration `json:"p50_ns"`
	P95   time.Duration `json:"p95_ns"`
	P99   time.Duration `json:"p99_ns"`
	Max   time.Duration `json:"max_ns"`
}

// Summarize computes the summary of samples (it sorts them in place). Percentiles use the
// nearest-rank method: Pq is the smallest sample with at least q% of the samples <= it.
func Summarize(samples []time.Duration) Latency {
	if len(samples) == 0 {
		return Latency{}
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	var sum time.Duration
	for _, s := range samples {
		sum += s
	}
	return Latency{
		Count: len(samples),
		Min:   samples[0],
		Mean:  sum / time.Duration(len(samples)),
		P50:   Percentile(samples, 50),
		P95:   Percentile(samples, 95),
		P99:   Percentile(samples, 99),
		Max:   samples[len(samples)-1],
	}
}

// Percentile is the nearest-rank q-th percentile of sorted samples (0 < q <= 100).
func Percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(q / 100 * float64(len(sorted))))
	if rank < 1 {
		rank = 1
	}
	if rank > len(sorted) {
		rank = len(sorted)
	}
	return sorted[rank-1]
}

// Bucket is one bar of a latency histogram: samples with Lo <= latency < Hi.
type Bucket struct {
	Lo    time.Duration `json:"lo_ns"`
	Hi    time.Duration `json:"hi_ns"`
	Count int           `json:"count"`
}

// Histogram sorts samples into n buckets whose bounds grow geometrically from the smallest
// to the largest sample (latencies span orders of magnitude). The last bucket includes the
// maximum. Every sample lands in exactly one bucket.
func Histogram(samples []time.Duration, n int) []Bucket {
	if len(samples) == 0 || n < 1 {
		return nil
	}
	lo, hi := samples[0], samples[0]
	for _, s := range samples {
		lo, hi = min(lo, s), max(hi, s)
	}
	buckets, place := geometricBuckets(lo, hi, n)
	for _, s := range samples {
		buckets[place(s)].Count++
	}
	return buckets
}

// geometricBuckets are n empty buckets from lo to hi (the last includes hi), and the index
// of the bucket holding a value within lo..hi.
func geometricBuckets(lo, hi time.Duration, n int) ([]Bucket, func(time.Duration) int) {
	// At least a factor of two between the edges, so that the bounds of n buckets are
	// distinct nanoseconds even when every sample is equal.
	lo = max(lo, time.Microsecond)
	hi = max(hi, 2*lo)
	ratio := math.Pow(float64(hi)/float64(lo), 1/float64(n))
	buckets := make([]Bucket, n)
	edge := float64(lo)
	for i := range buckets {
		buckets[i].Lo = time.Duration(edge)
		edge *= ratio
		buckets[i].Hi = time.Duration(edge)
	}
	buckets[0].Lo = 0
	buckets[n-1].Hi = hi + 1
	return buckets, func(s time.Duration) int {
		i := 0
		if s > lo {
			i = int(math.Log(float64(s)/float64(lo)) / math.Log(ratio))
		}
		// Floating point can land a sample one bucket off its bounds; settle it exactly.
		i = min(max(i, 0), n-1)
		for i > 0 && s < buckets[i].Lo {
			i--
		}
		for i < n-1 && s >= buckets[i].Hi {
			i++
		}
		return i
	}
}

// Second is the reservation traffic of one second of the run, by completion time.
type Second struct {
	Second   int `json:"second"` // since the reservation phase began
	Requests int `json:"requests"`
	Reserved int `json:"reserved"`
	SoldOut  int `json:"sold_out"`
	Errors   int `json:"errors"` // every other outcome
}

// recorder collects the outcome and latency of every request of one kind (the latencies
// in a LatencyHist: a million buyers' cost a fixed few KB); safe for concurrent use.
type recorder struct {
	start time.Time

	mu       sync.Mutex
	lat      LatencyHist
	codes    map[string]int
	timeline []Second
}

func newRecorder(start time.Time) *recorder {
	return &recorder{start: start, codes: map[string]int{}}
}

// add records one request that ended at end after taking d, with outcome code (CodeOK for
// a 200).
func (r *recorder) add(end time.Time, d time.Duration, code string) {
	sec := int(end.Sub(r.start) / time.Second)
	sec = max(sec, 0)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lat.Add(d)
	r.codes[code]++
	for len(r.timeline) <= sec {
		r.timeline = append(r.timeline, Second{Second: len(r.timeline)})
	}
	s := &r.timeline[sec]
	s.Requests++
	switch code {
	case CodeOK:
		s.Reserved++
	case CodeSoldOut:
		s.SoldOut++
	default:
		s.Errors++
	}
}

// snapshot returns copies of what was recorded.
func (r *recorder) snapshot() (lat *LatencyHist, codes map[string]int, timeline []Second) {
	r.mu.Lock()
	defer r.mu.Unlock()
	codes = make(map[string]int, len(r.codes))
	for k, v := range r.codes {
		codes[k] = v
	}
	h := r.lat
	return &h, codes, append([]Second(nil), r.timeline...)
}
