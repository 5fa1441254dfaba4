package benchrun

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seckill/seckill/devkit/standalone"
)

// BenchLine is one result line of `go test -bench`.
type BenchLine struct {
	Name    string             `json:"name"`  // without the -GOMAXPROCS suffix
	Procs   int                `json:"procs"` // that suffix (1 when absent)
	N       int64              `json:"n"`
	Metrics map[string]float64 `json:"metrics"` // unit -> value: "ns/op", "events/s", ...
}

// NsPerOp is the line's ns/op (0 when absent).
func (l BenchLine) NsPerOp() float64 { return l.Metrics["ns/op"] }

var (
	benchName   = regexp.MustCompile(`^(Benchmark\S+)\s+(.*)$`)
	benchResult = regexp.MustCompile(`^\s*(\d+)((?:\s+[-+0-9.eE]+ \S+)+)\s*$`)
	procsSuffix = regexp.MustCompile(`^(.+)-(\d+)$`)
)

// ParseBench reads the result lines out of `go test -bench` output. A benchmark's name is
// printed before it runs and its numbers after, so anything the benchmark writes to stdout
// meanwhile (logs) lands between them, on the name's line or on lines of its own; the
// numbers are taken from the next line that is nothing but numbers and units. procs is
// GOMAXPROCS of the test binary, whose "-procs" suffix is stripped from names (0: strip
// any numeric suffix).
func ParseBench(out string, procs int) []BenchLine {
	var lines []BenchLine
	pending := ""
	take := func(name, rest string) bool {
		m := benchResult.FindStringSubmatch(rest)
		if m == nil {
			return false
		}
		l := BenchLine{Name: name, Procs: 1, Metrics: map[string]float64{}}
		l.N, _ = strconv.ParseInt(m[1], 10, 64)
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return false
			}
			l.Metrics[f[i+1]] = v
		}
		if s := procsSuffix.FindStringSubmatch(name); s != nil && (procs <= 0 || s[2] == strconv.Itoa(procs)) {
			l.Name = s[1]
			l.Procs, _ = strconv.Atoi(s[2])
		}
		lines = append(lines, l)
		return true
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := benchName.FindStringSubmatch(line); m != nil {
			pending = ""
			if !take(m[1], m[2]) {
				pending = m[1]
			}
			continue
		}
		if strings.HasPrefix(line, "Benchmark") && !strings.ContainsAny(line, " \t") {
			pending = line // a name with nothing after it yet
			continue
		}
		if pending != "" && take(pending, line) {
			pending = ""
		}
	}
	return lines
}

// Find returns the line named name.
func Find(lines []BenchLine, name string) (BenchLine, bool) {
	for _, l := range lines {
		if l.Name == name {
			return l, true
		}
	}
	return BenchLine{}, false
}

// goBench is one `go test -bench` invocation comparing two of its benchmarks.
type goBench struct {
	label         string // the row
	pkg           string // ./internal/stock/
	pattern       string // -bench
	subject, base string // benchmark names without -procs
	subjectDesc   string
	baseDesc      string
	// extra are further benchmarks of the same output kept for derived rows (name -> desc).
	extra      map[string]string
	n          int    // -benchtime Nx
	unit       string // the rate's unit
	rateMetric string // a custom metric that is the rate ("": 1e9 / ns/op)
}

// goBenches are the Go benchmark pairs of a run.
func goBenches(c *Config) []goBench {
	return []goBench{{
		label: "stock.Reserve vs raw EVALSHA", pkg: "./internal/stock/",
		pattern: "^(BenchmarkReserve|BenchmarkRawEvalsha)$", n: c.StockN, unit: "op/s",
		subject: "BenchmarkReserve", subjectDesc: "stock.Reserve (reserve.lua)",
		base: "BenchmarkRawEvalsha", baseDesc: "raw EVALSHA (one HINCRBY)",
	}, {
		label: "writer group commit vs one transaction per event", pkg: "./mq/internal/writer/",
		pattern: "^BenchmarkWriter$", n: c.WriterN, unit: "events/s", rateMetric: "events/s",
		subject: "BenchmarkWriter/group-commit", subjectDesc: "writer, group commit (16 blocking handlers)",
		base: "BenchmarkWriter/per-event-tx", baseDesc: "writer, one tx per event",
		extra: map[string]string{writerBatched: "writer, batched (the mq consumer's path)"},
	}}
}

// writerBatched is the writer benchmark that the "writer / reservation rate" row uses.
const writerBatched = "BenchmarkWriter/batched"

// goRows runs the Go benchmark pairs against the system's Redis and MySQL (unless
// SECKILL_TEST_REDIS / SECKILL_TEST_MYSQL name others), before any HTTP load. extra holds
// the further measurements the pairs named (for derived rows).
func goRows(ctx context.Context, c *Config, sys *standalone.System, logf func(string, ...any), notes *[]string,
	extra map[string]Measurement) []Row {
	var env []string
	where := []string{}
	if v := os.Getenv("SECKILL_TEST_REDIS"); v == "" {
		env = append(env, "SECKILL_TEST_REDIS="+sys.RedisAddr)
		where = append(where, "the system's Redis")
	} else {
		where = append(where, "SECKILL_TEST_REDIS "+v)
	}
	if os.Getenv("SECKILL_TEST_MYSQL") == "" {
		env = append(env, "SECKILL_TEST_MYSQL="+sys.MySQLDSN)
		where = append(where, "the system's MySQL (a fresh database per benchmark)")
	} else {
		where = append(where, "SECKILL_TEST_MYSQL")
	}
	*notes = append(*notes, "Go benchmarks ran against "+strings.Join(where, " and ")+", while the system idled")
	procs := runtime.GOMAXPROCS(0)
	var rows []Row
	for _, b := range goBenches(c) {
		var rounds []Row
		more := map[string][]Measurement{}
		for round := range c.Rounds {
			logf("go test -bench '%s' -benchtime %dx %s (round %d of %d)", b.pattern, b.n, b.pkg, round+1, c.Rounds)
			row := goRound(ctx, c, b, env, procs, more)
			rounds = append(rounds, row)
			if row.Error != "" || ctx.Err() != nil {
				break
			}
		}
		for name, ms := range more {
			extra[name] = medianMeasurement(ms)
		}
		rows = append(rows, medianRow(rounds))
	}
	return rows
}

// goRound runs a benchmark pair once (one `go test`: the subject and its baseline back to
// back) and adds the further benchmarks it names to more.
func goRound(ctx context.Context, c *Config, b goBench, env []string, procs int, more map[string][]Measurement) Row {
	row := Row{Label: b.label, Subject: Measurement{Name: b.subjectDesc, Unit: b.unit},
		Baseline: Measurement{Name: b.baseDesc, Unit: b.unit}}
	out, err := runGoTest(ctx, c, b, env)
	if err != nil {
		row.Error = err.Error()
		return row
	}
	lines := ParseBench(out, procs)
	s, okS := Find(lines, b.subject)
	base, okB := Find(lines, b.base)
	if !okS || !okB {
		row.Error = fmt.Sprintf("%s or %s not in the output of go test (skipped or renamed?)\n%s", b.subject, b.base,
			tail(out, 30))
		return row
	}
	row.Subject, row.Baseline = goMeasurement(s, b.subjectDesc, b), goMeasurement(base, b.baseDesc, b)
	for name, desc := range b.extra {
		if l, ok := Find(lines, name); ok {
			more[name] = append(more[name], goMeasurement(l, desc, b))
		}
	}
	row.compute()
	return row
}

// medianMeasurement is the measurement of median rate.
func medianMeasurement(ms []Measurement) Measurement {
	sorted := slices.Clone(ms)
	slices.SortStableFunc(sorted, func(a, b Measurement) int { return cmp.Compare(a.Rate, b.Rate) })
	return sorted[(len(sorted)-1)/2]
}

// runGoTest runs `go test -bench` and returns its combined output.
func runGoTest(ctx context.Context, c *Config, b goBench, env []string) (string, error) {
	args := []string{"test", "-tags", c.Tags, "-run", "^$", "-bench", b.pattern,
		"-benchtime", fmt.Sprintf("%dx", b.n), "-count", "1", "-timeout", c.GoTestTimeout.String(), b.pkg}
	cmd := exec.CommandContext(ctx, c.Go, args...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", c.Go, strings.Join(args, " "), err, tail(string(out), 30))
	}
	return string(out), nil
}

// goMeasurement turns a benchmark line into a measurement.
func goMeasurement(l BenchLine, desc string, b goBench) Measurement {
	m := Measurement{Name: desc, Unit: b.unit, Count: int(l.N), NsPerOp: l.NsPerOp(), Metrics: l.Metrics}
	switch {
	case b.rateMetric != "" && l.Metrics[b.rateMetric] > 0:
		m.Rate = l.Metrics[b.rateMetric]
	case l.NsPerOp() > 0:
		m.Rate = 1e9 / l.NsPerOp()
	}
	return m
}

// tail is the last n lines of s, leaving out go-zero's JSON log lines.
func tail(s string, n int) string {
	var keep []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if !strings.HasPrefix(l, `{"@timestamp"`) {
			keep = append(keep, l)
		}
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	return strings.Join(keep, "\n")
}
