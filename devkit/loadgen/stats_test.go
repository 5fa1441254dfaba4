package loadgen

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func ms(v ...int) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, x := range v {
		out[i] = time.Duration(x) * time.Millisecond
	}
	return out
}

func TestPercentile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	for _, tc := range []struct {
		name   string
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"p50 of 1..100", hundred, 50, 50 * time.Millisecond},
		{"p95 of 1..100", hundred, 95, 95 * time.Millisecond},
		{"p99 of 1..100", hundred, 99, 99 * time.Millisecond},
		{"p100 is max", hundred, 100, 100 * time.Millisecond},
		{"p50 of 4 is the 2nd", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p51 of 4 is the 3rd", ms(1, 2, 3, 4), 51, 3 * time.Millisecond},
		{"tiny q is min", ms(5, 6), 0.0001, 5 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percentile(tc.sorted, tc.q); got != tc.want {
				t.Fatalf("Percentile(q=%g) = %s, want %s", tc.q, got, tc.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize(ms(9, 1, 5, 3, 7))
	want := Latency{Count: 5, Min: ms(1)[0], Mean: ms(5)[0], P50: ms(5)[0], P95: ms(9)[0], P99: ms(9)[0], Max: ms(9)[0]}
	if s != want {
		t.Fatalf("Summarize = %+v, want %+v", s, want)
	}
	if (Summarize(nil) != Latency{}) {
		t.Fatal("Summarize(nil) not zero")
	}
}

func TestHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name    string
		samples []time.Duration
		n       int
	}{
		{"spread", func() []time.Duration {
			var s []time.Duration
			for i := 0; i < 5000; i++ {
				s = append(s, time.Duration(rng.ExpFloat64()*float64(2*time.Millisecond))+50*time.Microsecond)
			}
			return s
		}(), 40},
		{"all equal", ms(3, 3, 3, 3), 10},
		{"below a microsecond", []time.Duration{10, 200, 999}, 5},
		{"one bucket", ms(1, 2, 30), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := Histogram(tc.samples, tc.n)
			if len(h) != tc.n {
				t.Fatalf("%d buckets, want %d", len(h), tc.n)
			}
			total := 0
			for i, b := range h {
				total += b.Count
				if b.Hi <= b.Lo || (i > 0 && b.Lo != h[i-1].Hi) {
					t.Fatalf("bucket %d [%s,%s) not contiguous/increasing", i, b.Lo, b.Hi)
				}
			}
			if total != len(tc.samples) {
				t.Fatalf("buckets hold %d samples, want %d", total, len(tc.samples))
			}
			// Each sample falls in the bucket whose bounds contain it.
			for _, s := range tc.samples {
				found := 0
				for _, b := range h {
					if s >= b.Lo && s < b.Hi {
						found++
					}
				}
				if found != 1 {
					t.Fatalf("sample %s lies in %d buckets", s, found)
				}
			}
		})
	}
}

func TestRecorderTimeline(t *testing.T) {
	start := time.Unix(1000, 0)
	r := newRecorder(start)
	r.add(start.Add(100*time.Millisecond), time.Millisecond, CodeOK)
	r.add(start.Add(900*time.Millisecond), time.Millisecond, CodeSoldOut)
	r.add(start.Add(2500*time.Millisecond), time.Millisecond, "BUSY")
	r.add(start.Add(2600*time.Millisecond), time.Millisecond, CodeSoldOut)
	lat, codes, tl := r.snapshot()
	want := []Second{{0, 2, 1, 1, 0}, {1, 0, 0, 0, 0}, {2, 2, 0, 1, 1}}
	if len(tl) != len(want) {
		t.Fatalf("timeline %+v", tl)
	}
	for i := range want {
		if tl[i] != want[i] {
			t.Fatalf("second %d = %+v, want %+v", i, tl[i], want[i])
		}
	}
	if lat.Count() != 4 || codes[CodeSoldOut] != 2 || codes["BUSY"] != 1 || codes[CodeOK] != 1 {
		t.Fatalf("latencies %d codes %v", lat.Count(), codes)
	}
}

func sampleReport() *Report {
	lat := ms(1, 2, 2, 3, 3, 3, 4, 5, 8, 40)
	r := &Report{Target: "http://127.0.0.1:8888", ActivityID: 9, Created: true, Buyers: 10, Concurrency: 2, Quantity: 1,
		StockAtStart: 3, Requests: 10, Reserved: 3, SoldOut: 6, Errors: map[string]int{"BUSY": 1},
		Histogram: Histogram(lat, 12), Latency: Summarize(lat),
		Timeline: []Second{{0, 6, 3, 3, 0}, {1, 4, 0, 3, 1}}, Reconcile: "consistent",
		FinalRedis: &Books{Remaining: 2, Sold: 1}, FinalDB: Books{Remaining: 2, Sold: 1}}
	r.check("no oversell: reserved <= stock", true, "3 reserved of 3")
	r.check("reconciliation consistent", false, "mismatch <script>alert(1)</script>")
	r.skip("sold exactly the stock", "errors")
	return r
}

func TestReportOK(t *testing.T) {
	r := sampleReport()
	if r.OK() {
		t.Fatal("OK with a failed check")
	}
	r.Checks[1].OK = true
	if !r.OK() {
		t.Fatal("not OK with passed and skipped checks")
	}
	if (&Report{}).OK() {
		t.Fatal("a report without checks is OK")
	}
}

func TestWriteHTML(t *testing.T) {
	var b bytes.Buffer
	if err := sampleReport().WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"<svg", "latency (log-spaced buckets)", "p99", "second 1: 1 errors", ">FAIL<", "BUSY 1",
		"&lt;script&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, banned := range []string{"<script", "src=\"http", "href=\"http"} {
		if strings.Contains(page, banned) {
			t.Errorf("page contains %q: it must be self-contained and script-free", banned)
		}
	}
	if n := strings.Count(page, "<svg"); n != 2 {
		t.Errorf("%d charts, want 2", n)
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	sampleReport().WriteText(&b)
	out := b.String()
	for _, want := range []string{"reserved   3", "sold out   6", "BUSY 1", "p99", "FAIL reconciliation consistent",
		"n/a  sold exactly", "result: FAIL"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}
