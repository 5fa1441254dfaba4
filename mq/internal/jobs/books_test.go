package jobs_test

import (
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/seckill/seckill/mq/internal/jobs"
)

// series reads a gauge from the default registry (the one /metrics serves); ok is false
// when the series does not exist.
func series(t *testing.T, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.Metric {
			if matches(m, labels) {
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

func matches(m *dto.Metric, labels map[string]string) bool {
	n := 0
	for _, lp := range m.Label {
		if v, ok := labels[lp.GetName()]; ok {
			if v != lp.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(labels)
}

// TestBooksGaugesFollowTheSaleAndRetire: the books job exports both books of an active
// activity, and every per-activity series (books and reconciliation) is deleted once the
// activity drops out of ListActive (end + grace passed).
func TestBooksGaugesFollowTheSaleAndRetire(t *testing.T) {
	f := newFixture(t, false)
	aid := f.live(10, 5, 900)
	label := strconv.FormatInt(aid, 10)
	for uid := int64(1); uid <= 3; uid++ {
		f.reserve(aid, uid)
	}
	books := jobs.NewBooks(f.inv)
	if err := books.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	f.reconcile(aid) // the reconciliation series too
	for _, c := range []struct {
		name, field string
		want        float64
	}{
		{"seckill_stock_redis_units", "remaining", 7}, {"seckill_stock_redis_units", "locked", 3},
		{"seckill_stock_redis_units", "sold", 0},
		{"seckill_stock_mysql_units", "available", 10}, {"seckill_stock_mysql_units", "locked", 0},
		{"seckill_stock_mysql_units", "sold", 0},
	} {
		got, ok := series(t, c.name, map[string]string{"activity": label, "field": c.field})
		if !ok || got != c.want {
			t.Errorf("%s{activity=%s,field=%s} = %v (present %v), want %v", c.name, label, c.field, got, ok, c.want)
		}
	}
	if _, ok := series(t, "seckill_reconcile_status", map[string]string{"activity": label}); !ok {
		t.Fatal("no reconcile status series after a run")
	}

	// The activity retires: its end (the score in sk:active) is long past the grace.
	if err := f.env.Store.Activate(ctx, aid, 1); err != nil {
		t.Fatal(err)
	}
	if err := books.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"seckill_stock_redis_units", "seckill_stock_mysql_units",
		"seckill_reconcile_status", "seckill_reconcile_drift_units", "seckill_reconcile_in_flight_events"} {
		if v, ok := series(t, name, map[string]string{"activity": label}); ok {
			t.Errorf("%s{activity=%s} = %v still exported after the activity retired", name, label, v)
		}
	}
}
