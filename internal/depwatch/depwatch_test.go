package depwatch_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/depwatch"
)

func up(t *testing.T, dep string) (float64, bool) {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "seckill_dependency_up" {
			continue
		}
		for _, m := range mf.Metric {
			for _, l := range m.Label {
				if l.GetName() == "dependency" && l.GetValue() == dep {
					return m.GetGauge().GetValue(), true
				}
			}
		}
	}
	return 0, false
}

// TestWatchReportsUpAndDown: a real Redis answering is 1; a port nothing listens on is 0.
func TestWatchReportsUpAndDown(t *testing.T) {
	rds, _ := testenv.Redis(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	_ = l.Close()
	w := depwatch.New(depwatch.Conf{Interval: 50 * time.Millisecond, Timeout: time.Second}, "test",
		depwatch.Probe{Dependency: "redis-test", Check: func(ctx context.Context) error {
			if !rds.PingCtx(ctx) {
				return context.DeadlineExceeded
			}
			return nil
		}},
		depwatch.Probe{Dependency: "gone-test", Check: func(ctx context.Context) error {
			var d net.Dialer
			c, err := d.DialContext(ctx, "tcp", closed)
			if err == nil {
				_ = c.Close()
			}
			return err
		}})
	go w.Start()
	defer w.Stop()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, rok := up(t, "redis-test")
		g, gok := up(t, "gone-test")
		if rok && gok {
			if r != 1 || g != 0 {
				t.Fatalf("redis-test %v, gone-test %v; want 1 and 0", r, g)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no probe result after 5 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
