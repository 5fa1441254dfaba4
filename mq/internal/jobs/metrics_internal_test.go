package jobs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// jobErrors reads seckill_jobs_errors_total's series labelled task=task from the default
// registry (the one /metrics serves); it fails the test when a series carries a `job` label,
// which Prometheus would rename to exported_job beside its own target label.
func jobErrors(t *testing.T, task string) float64 {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "seckill_jobs_errors_total" {
			continue
		}
		for _, m := range mf.Metric {
			for _, lp := range m.Label {
				if lp.GetName() == "job" {
					t.Fatalf("seckill_jobs_errors_total has a job label: %v", m.Label)
				}
				if lp.GetName() == "task" && lp.GetValue() == task {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no seckill_jobs_errors_total{task=%q}", task)
	return 0
}

// TestJobErrorsCountedByTask: a failing tick counts one error under its task's name.
func TestJobErrorsCountedByTask(t *testing.T) {
	before := jobErrors(t, "expiry")
	l := newLoop("expiry", time.Second, func(context.Context) error { return errors.New("down") })
	l.run()
	if got := jobErrors(t, "expiry") - before; got != 1 {
		t.Fatalf("seckill_jobs_errors_total{task=\"expiry\"} went up by %v, want 1", got)
	}
}
