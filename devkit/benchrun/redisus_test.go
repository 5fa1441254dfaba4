package benchrun

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/testenv"
)

func TestParseCommandStats(t *testing.T) {
	info := "# Commandstats\r\n" +
		"cmdstat_evalsha:calls=3,usec=54,usec_per_call=18.00,rejected_calls=0,failed_calls=1\r\n" +
		"cmdstat_eval:calls=2,usec=10,usec_per_call=5.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_config|resetstat:calls=1,usec=7,usec_per_call=7.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_HSET:calls=9,usec=4,usec_per_call=0.44\r\n\r\n"
	got, err := ParseCommandStats(info)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]CmdStat{"evalsha": {3, 54}, "eval": {2, 10}, "config|resetstat": {1, 7}, "hset": {9, 4}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %+v, want %+v", k, got[k], v)
		}
	}
	// The script commands only: the commands a script runs are inside its usec already.
	if s := ScriptTime(got); s != (CmdStat{5, 64}) {
		t.Errorf("script time %+v, want {5 64}", s)
	}
	for _, bad := range []string{"cmdstat_evalsha:calls=x,usec=1", "cmdstat_evalsha:usec_per_call=1.0"} {
		if _, err := ParseCommandStats(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestRedisRowTiny measures the row with few reservations on a private redis-server: every
// reservation is made and counted, and the counters are reset before each measurement (a
// batch of one is one script call per reservation, none left over from the one before).
func TestRedisRowTiny(t *testing.T) {
	testenv.Redis(t) // skips (or fails under CI) without Redis
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const n, batch = 96, 8
	var notes []string
	row := redisRow(ctx, &Config{RedisN: n, RedisBatch: batch, Rounds: 2}, testenv.RedisAddr(),
		func(string, ...any) {}, &notes)
	if row.Error != "" {
		t.Fatal(row.Error)
	}
	if row.Label != redisUSLabel || len(row.Rounds) != 2 || row.Ratio <= 0 || row.P99Ratio != 0 {
		t.Fatalf("row %+v", row)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "private redis-server") {
		t.Errorf("not measured on a private redis-server: %v", notes)
	}
	for _, tc := range []struct {
		m     Measurement
		batch float64
	}{{row.Baseline, 1}, {row.Subject, batch}} {
		m := tc.m
		calls := m.Metrics["script calls"]
		if m.Count != n || m.Rate <= 0 || m.Metrics["batch"] != tc.batch || m.Rate != m.Metrics["script usec"]/n {
			t.Errorf("%s: count %d rate %f metrics %v", m.Name, m.Count, m.Rate, m.Metrics)
		}
		// At most one script call per reservation (an order number taken is retried: rare).
		if calls < n/tc.batch || calls > n+2 {
			t.Errorf("%s: %v script calls for %d reservations in batches of %v", m.Name, calls, n, tc.batch)
		}
		if tc.batch == 1 && calls < n {
			t.Errorf("%s: %v script calls for %d single reservations", m.Name, calls, n)
		}
	}
	if row.Subject.Metrics["us/reservation at batch 16"] <= 0 {
		t.Errorf("no batch of 16 in %v", row.Subject.Metrics)
	}
}
