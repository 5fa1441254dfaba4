package benchrun

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/standalone"
	"github.com/seckill/seckill/devkit/testenv"
)

func TestParseSweep(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  bool
	}{
		{"4,16,64", []int{4, 16, 64}, false},
		{" 8 ", []int{8}, false},
		{"4,,16,", []int{4, 16}, false},
		{"", nil, false},
		{"0", nil, true},
		{"4,x", nil, true},
		{"10001", nil, true},
		{"-3", nil, true},
	} {
		got, err := ParseSweep(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("ParseSweep(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestParseStatus(t *testing.T) {
	rows := [][2]string{{"Innodb_row_lock_time", "1234"}, {"THREADS_RUNNING", " 7 "}, {"Innodb_row_lock_waits", "9"},
		{"Uptime", "x"}}
	got, err := ParseStatus(rows, statusNames)
	if err != nil {
		t.Fatal(err)
	}
	if got["Threads_running"] != 7 || got["Innodb_row_lock_waits"] != 9 || got["Innodb_row_lock_time"] != 1234 ||
		len(got) != 3 {
		t.Fatalf("got %v", got)
	}
	if _, err := ParseStatus(rows[:2], statusNames); err == nil || !strings.Contains(err.Error(),
		"Innodb_row_lock_waits") {
		t.Errorf("a missing variable: %v, want an error naming it", err)
	}
	if _, err := ParseStatus([][2]string{{"Threads_running", "1.5"}}, []string{"Threads_running"}); err == nil {
		t.Error("a non-integer value: no error")
	}
}

func TestSeen(t *testing.T) {
	before := map[string]int64{"Innodb_row_lock_waits": 10, "Innodb_row_lock_time": 100}
	after := map[string]int64{"Innodb_row_lock_waits": 25, "Innodb_row_lock_time": 1100}
	s := seen(before, after, []int64{2, 9, 4})
	if s != (MySQLSeen{Samples: 3, ThreadsRunningMax: 9, ThreadsRunningMean: 5, RowLockWaits: 15, RowLockTimeMs: 1000}) {
		t.Fatalf("%+v", s)
	}
	if s := seen(before, before, nil); s.ThreadsRunningMean != 0 || s.Samples != 0 || s.RowLockWaits != 0 {
		t.Fatalf("no samples: %+v", s)
	}
}

func TestBookCheck(t *testing.T) {
	ok := BookCheck{Stock: 100, Available: 58, Live: 42, LiveUnits: 42, Answered: 40, Late: 2, Replayed: 2, Mode: "mysql"}
	if f := ok.Check(); len(f) != 0 {
		t.Fatalf("a consistent book failed: %v", f)
	}
	for _, tc := range []struct {
		name string
		mod  func(*BookCheck)
		want string
	}{
		{"an answer without an order", func(b *BookCheck) { b.Missing, b.Answered = 1, 41 },
			"1 of 41 reservations answered are no live order"},
		{"an order neither answered nor late", func(b *BookCheck) { b.Live, b.LiveUnits, b.Available = 43, 43, 57 },
			"43 live orders in MySQL, 40 answered + 2 late"},
		{"a late order a retry does not return", func(b *BookCheck) { b.Replayed = 1 }, "1 of 2 late orders not returned"},
		{"units gone without an order", func(b *BookCheck) { b.Available = 57 }, "43 units gone, live orders hold 42"},
		{"oversold", func(b *BookCheck) { b.Available, b.Live, b.LiveUnits, b.Answered = 0, 101, 101, 99 }, "oversold"},
		{"a request id twice", func(b *BookCheck) { b.Dup = 1 }, "1 request ids with two orders"},
		{"not degraded", func(b *BookCheck) { b.Mode = "redis" }, `mode "redis"`},
	} {
		b := ok
		tc.mod(&b)
		if f := strings.Join(b.Check(), "; "); !strings.Contains(f, tc.want) {
			t.Errorf("%s: %q, want it to say %q", tc.name, f, tc.want)
		}
	}
}

func TestBusyKind(t *testing.T) {
	for body, want := range map[string]string{
		`{"code":"BUSY","msg":"degrade mode: too many requests into MySQL, retry with the same request_id"}`: BusySemaphore,
		`{"code":"BUSY","msg":"overloaded, retry later"}`:                                                    BusyGateway,
		`{"code":"BUSY","msg":"service busy, retry later"}`:                                                  BusyDeadline,
		`{"code":"BUSY","msg":"switching to degrade mode, retry with the same request_id"}`:                  BusyOther,
		`garbage`: BusyOther,
	} {
		if got := BusyKind([]byte(body)); got != want {
			t.Errorf("BusyKind(%s) = %q, want %q", body, got, want)
		}
	}
}

func TestAnswers(t *testing.T) {
	var a answers
	for _, tc := range []struct {
		status int
		body   string
		want   bool
	}{
		{200, `{"order_no":"A1","remaining":3}`, true},
		{200, `{"order_no":"A1"}`, true}, // the same order again (a replay): counted once
		{200, `{"order_no":"B2"}`, true},
		{200, `{"order_no":""}`, false},
		{503, `{"code":"BUSY","order_no":"C3"}`, false},
		{200, `not json`, false},
	} {
		if got := a.reserved(tc.status, []byte(tc.body)); got != tc.want {
			t.Errorf("reserved(%d, %s) = %v", tc.status, tc.body, got)
		}
	}
	if a.count() != 2 || !a.has("A1") || !a.has("B2") || a.has("C3") {
		t.Fatalf("orders %v", a.orders)
	}
}

func TestDegradeReport(t *testing.T) {
	res := &Result{Degrade: &Degrade{Clients: 128, Requests: 1000, MaxDuration: 3 * time.Second, LeaseMs: 250,
		Points: []DegradePoint{
			{Concurrency: 32, RedisRate: 1000, Sent: 400, Reserved: 100, Busy: 300, BusyBy: map[string]int{BusySemaphore: 200,
				BusyGateway: 90, BusyDeadline: 10}, Rate: 50, P50: 20 * time.Millisecond, P99: 900 * time.Millisecond,
				MySQL: MySQLSeen{ThreadsRunningMax: 33, ThreadsRunningMean: 20.5, RowLockWaits: 90, RowLockTimeMs: 8000},
				Book:  BookCheck{Live: 1102, Answered: 1100, Late: 2, Replayed: 2}, SwitchWait: 2 * time.Second},
			{Concurrency: 4, Sent: 10, Reserved: 9, Busy: 1, Rate: 20, Other: map[string]int{"HTTP_500": 2},
				Failed: []string{"9 live orders in MySQL for 10 reservations answered"}},
			{Concurrency: 64, Error: "start: boom\nmore"},
		}}}
	var b strings.Builder
	res.WriteText(&b)
	out := b.String()
	if !strings.Contains(out, "128 concurrent buyers for 3s (at most 1000 buyers)") {
		t.Errorf("no heading:\n%s", out)
	}
	line := func(prefix string) []string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, prefix) {
				return strings.Fields(l)
			}
		}
		t.Fatalf("no line %q:\n%s", prefix, out)
		return nil
	}
	want32 := "32 50.0 0.05x (1,000/s) 20ms 900ms 400 300 (75%) 200 / 90 / 10 / 0 0 33 / 20.5 90 8000 ms 2s ok " +
		"(1102 orders: 1100 answered + 2 late, 2 replayed)"
	if f := strings.Join(line("32 "), " "); f != want32 {
		t.Errorf("semaphore 32: %q", f)
	}
	if f := strings.Join(line("4 "), " "); !strings.Contains(f, "1 (10%) 0 / 0 / 0 / 0 HTTP_500 2") ||
		!strings.HasSuffix(f,
			"FAIL: 9 live orders in MySQL for 10 reservations answered (0 orders: 0 answered + 0 late, 0 replayed)") {
		t.Errorf("semaphore 4: %q", f)
	}
	if f := strings.Join(line("64 "), " "); f != "64 not measured: start: boom" {
		t.Errorf("semaphore 64: %q", f)
	}
	err := res.Failed()
	if err == nil || !strings.Contains(err.Error(), "semaphore 4, exactly-once: 9 live orders") ||
		!strings.Contains(err.Error(), "semaphore 64: start: boom") ||
		strings.Contains(err.Error(), "semaphore 32") || strings.Contains(err.Error(), "more") {
		t.Errorf("Failed() = %v", err)
	}
	if p := (DegradePoint{}); p.BusyShare() != 0 {
		t.Error("BusyShare of nothing sent")
	}
}

// TestRunDegradeTiny runs the degrade-mode part of `make bench` with a short burst on
// testenv's Redis (reached through the bench's own proxy, which is what is cut) and MySQL
// (a database of its own on that server): the MySQL book must sell after the cut, answer
// BUSY over the semaphore, and every reservation answered must be exactly one order.
func TestRunDegradeTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the system twice")
	}
	_, keys := testenv.Redis(t)
	db := testenv.MySQL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var progress strings.Builder
	res, err := Run(ctx, Config{
		Dir: "../..", SkipGo: true, SkipHTTP: true, SkipRedis: true, SkipCapacity: true,
		Standalone:     standalone.Config{RedisAddr: testenv.RedisAddr(), MySQLDSN: db.DSN, KeyPrefix: keys.Prefix},
		DegradeClients: 16, DegradeRequests: 5000, DegradeDuration: 700 * time.Millisecond, DegradeSweep: []int{1},
		Log: &progress,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	var text strings.Builder
	res.WriteText(&text)
	t.Logf("\n%s", text.String())
	if err := res.Failed(); err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if len(res.Rows) != 1 || res.Degrade == nil || len(res.Degrade.Points) != 2 {
		t.Fatalf("rows %d, degrade %+v", len(res.Rows), res.Degrade)
	}
	row := res.Rows[0]
	if row.Subject.Count < 1 || row.Baseline.Count < 1 || row.Ratio <= 0 || row.P99Ratio <= 0 {
		t.Errorf("row %+v", row)
	}
	for _, p := range res.Degrade.Points {
		if p.Reserved < 1 || p.Sent != p.Reserved+p.Busy+sumCounts(p.Other) || p.Book.Live < p.Book.Answered ||
			p.Book.Mode != "mysql" {
			t.Errorf("semaphore %d: %+v", p.Concurrency, p)
		}
	}
	// The gateway's 2 calls in flight (Coalesce.InFlight) against a semaphore of 1: the excess is BUSY.
	if p := res.Degrade.Points[1]; p.Concurrency != 1 || p.Busy == 0 || p.MySQL.Samples == 0 {
		t.Errorf("semaphore 1: %+v", p)
	}
}
