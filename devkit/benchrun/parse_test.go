package benchrun

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/devkit/loadgen"
)

// stockOut and writerOut are real `go test -bench` outputs of this repository (the
// writer's go-zero logs cut short): the writer's logs land between a benchmark's name and
// its numbers.
const stockOut = `goos: linux
goarch: amd64
pkg: github.com/seckill/seckill/internal/stock
cpu: AMD EPYC
BenchmarkReserve-2      	   20000	     86370 ns/op
BenchmarkRawEvalsha-2   	   20000	     42361 ns/op
PASS
ok  	github.com/seckill/seckill/internal/stock	4.326s
`

const writerOut = "goos: linux\n" +
	"goarch: amd64\n" +
	"pkg: github.com/seckill/seckill/mq/internal/writer\n" +
	"cpu: AMD EPYC\n" +
	"BenchmarkWriter/per-event-tx-2         \t{\"@timestamp\":\"2026-11-30T03:05:06.224Z\"" +
	",\"caller\":\"sqlx/stmt.go:274\",\"content\":\"sql query: SELECT " +
	"1\",\"duration\":\"0.8ms\",\"level\":\"info\"}\n" +
	"{\"@timestamp\":\"2026-11-30T03:05:06.225Z\",\"caller\":\"sqlx/stmt.go:274\",\"content\":\"" +
	"sql exec: UPDATE x SET n = 1 - 0\",\"duration\":\"0.3ms\",\"level\":\"info\"}\n" +
	"     500\t   1508181 ns/op\t       663.1 events/s\t         1.000 events/tx\n" +
	"BenchmarkWriter/group-commit-2         \t{\"@timestamp\":\"2026-11-30T03:05:07.019Z\"" +
	",\"caller\":\"sqlx/stmt.go:274\",\"content\":\"sql query: SELECT " +
	"2\",\"duration\":\"0.6ms\",\"level\":\"info\"}\n" +
	"     500\t    234605 ns/op\t      4262 events/s\t         7.812 events/tx\n" +
	"PASS\n" +
	"ok  \tgithub.com/seckill/seckill/mq/internal/writer\t0.984s\n"

func TestParseBench(t *testing.T) {
	type want struct {
		name  string
		procs int
		n     int64
		m     map[string]float64
	}
	for _, tc := range []struct {
		name  string
		out   string
		procs int
		want  []want
	}{
		{"plain", stockOut, 2, []want{
			{"BenchmarkReserve", 2, 20000, map[string]float64{"ns/op": 86370}},
			{"BenchmarkRawEvalsha", 2, 20000, map[string]float64{"ns/op": 42361}},
		}},
		{"logs between name and numbers, custom metrics", writerOut, 2, []want{
			{"BenchmarkWriter/per-event-tx", 2, 500, map[string]float64{"ns/op": 1508181, "events/s": 663.1, "events/tx": 1}},
			{"BenchmarkWriter/group-commit", 2, 500, map[string]float64{"ns/op": 234605, "events/s": 4262, "events/tx": 7.812}},
		}},
		{"GOMAXPROCS 1: no suffix, a name ending in digits kept", "BenchmarkSize-100 \t 10\t 5.5 ns/op\n", 1, []want{
			{"BenchmarkSize-100", 1, 10, map[string]float64{"ns/op": 5.5}},
		}},
		{"procs unknown: any numeric suffix stripped", "BenchmarkX-8 \t 3\t 7 ns/op\t 12 B/op\t 1 allocs/op\n", 0, []want{
			{"BenchmarkX", 8, 3, map[string]float64{"ns/op": 7, "B/op": 12, "allocs/op": 1}},
		}},
		{"a skipped benchmark has no line", "--- SKIP: BenchmarkReserve\n    bench_test.go:20: redis unavailable\nPASS\n", 2,
			nil},
		{"a failed run prints no numbers",
			"BenchmarkReserve-2 \t--- FAIL: BenchmarkReserve-2\n    bench_test.go:30: boom\nFAIL\n", 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ParseBench(tc.out, tc.procs)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d lines %+v, want %d", len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Name != w.name || g.Procs != w.procs || g.N != w.n || len(g.Metrics) != len(w.m) {
					t.Errorf("line %d = %+v, want %+v", i, g, w)
				}
				for unit, v := range w.m {
					if g.Metrics[unit] != v {
						t.Errorf("line %d %s = %v, want %v", i, unit, g.Metrics[unit], v)
					}
				}
			}
		})
	}
}

func TestGoRowsFromOutput(t *testing.T) {
	c := &Config{StockN: 20000, WriterN: 500}
	benches := goBenches(c)
	for _, tc := range []struct {
		out       string
		b         goBench
		wantRatio float64
	}{
		// Reserve's rate over the raw EVALSHA's: ns/op inverted.
		{stockOut, benches[0], 42361.0 / 86370.0},
		// The writer's rate is its events/s metric.
		{writerOut, benches[1], 4262 / 663.1},
	} {
		lines := ParseBench(tc.out, 2)
		s, ok1 := Find(lines, tc.b.subject)
		b, ok2 := Find(lines, tc.b.base)
		if !ok1 || !ok2 {
			t.Fatalf("%s / %s not found in %+v", tc.b.subject, tc.b.base, lines)
		}
		row := Row{Subject: goMeasurement(s, tc.b.subjectDesc, tc.b), Baseline: goMeasurement(b, tc.b.baseDesc, tc.b)}
		row.compute()
		if math.Abs(row.Ratio-tc.wantRatio) > 1e-9 {
			t.Errorf("%s: ratio %v, want %v", tc.b.label, row.Ratio, tc.wantRatio)
		}
		if row.P99Ratio != 0 {
			t.Errorf("%s: a p99 ratio without latencies", tc.b.label)
		}
	}
}

// The median round is reported, with every round's ratio in the order measured; a failed
// round fails the row.
func TestMedianRow(t *testing.T) {
	row := func(subject, base float64) Row {
		r := Row{Subject: Measurement{Rate: subject}, Baseline: Measurement{Rate: base}}
		r.compute()
		return r
	}
	m := medianRow([]Row{row(90, 100), row(50, 100), row(70, 100)})
	if m.Ratio != 0.7 || m.Subject.Rate != 70 || !slices.Equal(m.Rounds, []float64{0.9, 0.5, 0.7}) {
		t.Fatalf("median %+v", m)
	}
	if m := medianRow([]Row{row(60, 100), row(80, 100)}); m.Ratio != 0.6 || len(m.Rounds) != 2 {
		t.Fatalf("even count: %+v", m)
	}
	if m := medianRow([]Row{row(60, 100)}); m.Ratio != 0.6 || m.Rounds != nil {
		t.Fatalf("one round: %+v", m)
	}
	failed := row(1, 100)
	failed.Error = "boom"
	if m := medianRow([]Row{row(60, 100), failed, row(80, 100)}); m.Error != "boom" {
		t.Fatalf("a failed round: %+v", m)
	}
	var text strings.Builder
	res := &Result{Rows: []Row{medianRow([]Row{row(90, 100), row(50, 100), row(70, 100)})}}
	res.WriteText(&text)
	if !strings.Contains(text.String(), "the median of 3 rounds (0.90x, 0.50x, 0.70x") {
		t.Fatalf("text does not give the rounds:\n%s", text.String())
	}
}

func TestFromLoadgen(t *testing.T) {
	rep := &loadgen.Report{
		ReserveDuration: 2 * time.Second, NotSent: 3,
		Attempts: map[string]int{loadgen.CodeOK: 1, loadgen.CodeSoldOut: 990, "RATE_LIMITED": 4, loadgen.CodeTransport: 2},
		Latency:  loadgen.Latency{P50: time.Millisecond, P99: 9 * time.Millisecond},
	}
	m := fromLoadgen(Measurement{Name: "x"}, rep, loadgen.CodeSoldOut)
	if m.Count != 990 || m.Rate != 495 || m.NotSent != 3 || m.P99 != 9*time.Millisecond {
		t.Fatalf("measurement %+v", m)
	}
	if m.OtherCount() != 7 || m.Other[loadgen.CodeOK] != 1 || m.Other["RATE_LIMITED"] != 4 ||
		m.Other[loadgen.CodeTransport] != 2 {
		t.Fatalf("other %v: every outcome but the wanted one", m.Other)
	}
}

func TestProfile(t *testing.T) {
	for _, tc := range []struct {
		mode, name, says string
	}{
		{"dev", "noshed-dev", "load.Disable() called before any server is built"},
		{"test", "noshed-test", "load.Disable() called before any server is built"},
		{"pro", "shedding-pro", "adaptive load shedding above CpuThreshold 900"},
	} {
		var c apiserver.Config
		c.Mode, c.CpuThreshold, c.Timeout = tc.mode, 900, 3000
		c.RateLimit.Enabled, c.RateLimit.Quota, c.RateLimit.Period = true, 5, 1
		p := profile(c)
		if p.Name != tc.name || !strings.Contains(p.Description, tc.says) || !strings.Contains(p.Description,
			"5 per 1 s per buyer") {
			t.Errorf("mode %s: %+v", tc.mode, p)
		}
	}
}

func TestFormatting(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{0.5, "0.5"}, {99.94, "99.9"}, {100, "100"}, {1234.4, "1,234"}, {1234567.8, "1,234,568"}, {999999.6, "1,000,000"}} {
		if got := group(tc.v); got != tc.want {
			t.Errorf("group(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
	for _, tc := range []struct {
		v    float64
		want string
	}{{0, "-"}, {math.Inf(1), "-"}, {math.NaN(), "-"}, {0.254, "0.25x"}, {7.777, "7.78x"}, {12.34, "12.3x"}} {
		if got := ratio(tc.v); got != tc.want {
			t.Errorf("ratio(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
	if got := dur(42427 * time.Microsecond); got != "42.43ms" {
		t.Errorf("dur = %q", got)
	}
}

func sampleResult() *Result {
	res := &Result{
		Profile:  Profile{Name: "noshed-dev", Description: "Mode dev"},
		Machine:  Machine{NumCPU: 2, GOMAXPROCS: 2, OS: "linux/amd64", Go: "go1.26"},
		Settings: Settings{Concurrency: 64, Requests: 10000, MaxDuration: 15 * time.Second},
		Rows: []Row{{
			Label: "reservations",
			Subject: Measurement{Name: "reservations via the gateway", Unit: "/s", Rate: 2400, Count: 9990,
				Other: map[string]int{"RATE_LIMITED": 10}, Elapsed: time.Second, P99: 48 * time.Millisecond},
			Baseline: Measurement{Name: "HTTP->zRPC echo (one Ping)", Unit: "/s", Rate: 4800, Count: 10000,
				Elapsed: time.Second, P99: 24 * time.Millisecond},
		}, {
			Label: "writer", Error: "go test: exit status 1\n--- FAIL",
			Subject: Measurement{Name: "writer, group commit"}, Baseline: Measurement{Name: "writer, one tx per event"},
		}, {
			Label:   "sale vs bare",
			Subject: Measurement{Name: "sale answers", Unit: "/s", Rate: 3000, Count: 1000, P99: 30 * time.Millisecond},
			Baseline: Measurement{Name: "bare go-zero handler (256 clients)", Unit: "/s", Rate: 6000, Count: 1000,
				P99: 10 * time.Millisecond},
			Metrics: map[string]float64{MetricSaleP99: 30, MetricBareP99: 10},
		}},
		Sale:  &Sale{ActivityID: 1, OK: true, Reconcile: "consistent"},
		Notes: []string{"absolute numbers on 2 noisy cores mean little: the ratios are the figures"},
	}
	for i := range res.Rows {
		res.Rows[i].compute()
	}
	return res
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	res := sampleResult()
	res.WriteText(&b)
	out := b.String()
	for _, want := range []string{
		`profile "noshed-dev"`, "nproc 2", "64 concurrent keep-alive clients", "10000 requests or 15s",
		"2,400/s", "48ms", "4,800/s", "24ms", "0.50x", "p99 2.00x",
		"other RATE_LIMITED 10", "other none", "not measured", "go test: exit status 1",
		"load generator checks PASS", "ratios are the figures", "metrics: bare p99 ms 10.00, sale p99 ms 30.00",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if err := res.Failed(); err == nil || !strings.Contains(err.Error(), "writer: go test: exit status 1") ||
		strings.Contains(err.Error(), "FAIL") {
		t.Errorf("Failed() = %v, want the writer row's first line", err)
	}
	res.Rows = slices.Delete(res.Rows, 1, 2)
	if err := res.Failed(); err != nil {
		t.Errorf("Failed() = %v with every row measured and the sale passed", err)
	}
	res.Sale.OK, res.Sale.Failed = false, []string{"books add up: no"}
	if err := res.Failed(); err == nil || !strings.Contains(err.Error(), "books add up") {
		t.Errorf("Failed() = %v for a failed sale", err)
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := sampleResult().WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Profile.Name != "noshed-dev" || back.Machine.NumCPU != 2 || len(back.Rows) != 3 ||
		back.Rows[0].Ratio != 0.5 || back.Rows[0].P99Ratio != 2 || back.Rows[0].Subject.Other["RATE_LIMITED"] != 10 ||
		back.Rows[1].Error == "" || back.Settings.MaxDuration != 15*time.Second ||
		back.Rows[2].Metrics[MetricSaleP99] != 30 || back.Rows[2].Metrics[MetricBareP99] != 10 {
		t.Fatalf("round trip: %+v", back)
	}
}

// TestSaleTarget: the "sale vs bare" row meets the targets only at >= 1x the bare
// handler's rate and <= 2x its p99.
func TestSaleTarget(t *testing.T) {
	for _, tc := range []struct {
		ratio, p99 float64
		met        bool
	}{{1, 2, true}, {1.5, 0.8, true}, {0.99, 1, false}, {1.2, 2.01, false}, {1.2, 0, false}} {
		got := saleTarget(Row{Ratio: tc.ratio, P99Ratio: tc.p99})
		if strings.Contains(got, ": met;") != tc.met || strings.Contains(got, "NOT met") == tc.met {
			t.Errorf("ratio %v, p99 ratio %v: %q, want met %v", tc.ratio, tc.p99, got, tc.met)
		}
	}
}
