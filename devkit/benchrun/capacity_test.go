package benchrun

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/baseline"
	"github.com/seckill/seckill/devkit/loadgen"
)

// knownCapacity is a server that answers as the bare handler does, slots requests at once,
// each taking service: slots/service requests per second.
func knownCapacity(t *testing.T, slots int, service time.Duration) *httptest.Server {
	sem := make(chan struct{}, slots)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sem <- struct{}{}
		time.Sleep(service)
		<-sem
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"code":"SOLD_OUT"}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// searchOf searches srv's capacity through baseline.Capacity (loadgen's search and Open
// driver), recording the order of the searches in order.
func searchOf(srv *httptest.Server, name string, order *[]string) capacitySearch {
	return func(ctx context.Context, s loadgen.CapacitySearch) (*loadgen.CapacityReport, error) {
		*order = append(*order, name)
		req := func(int) (baseline.Request, error) { return baseline.Request{Path: baseline.BarePath}, nil }
		return baseline.Capacity(ctx, baseline.CapacityConfig{}, srv.URL, s, req, baseline.IsBare)
	}
}

// Two servers of known capacity, 400/s (the subject) and 800/s (the baseline): the row's
// ratio is the subject's search's capacity over the baseline's, each side's rate its
// search's capacity, each search after a one-step warm-up. The bound is 5x the service
// time and the ratio is checked only loosely (known 0.5), so that a noisy machine's stray
// delays do not fail the test.
func TestCapacityRowFromTwoSearches(t *testing.T) {
	subject, base := knownCapacity(t, 8, 20*time.Millisecond), knownCapacity(t, 16, 20*time.Millisecond)
	c := &Config{CapacityP99: 100 * time.Millisecond, CapacityStep: 300 * time.Millisecond,
		CapacityBudget: 24 * time.Second}
	var order, notes []string
	var progress strings.Builder
	logf := func(format string, args ...any) { progress.WriteString(format + "\n") }
	row, capy := capacityRow(context.Background(), c, searchOf(base, "bare", &order),
		searchOf(subject, "reservations", &order), logf, &notes)
	var text strings.Builder
	(&Result{Rows: []Row{row}, Capacity: capy}).WriteText(&text)
	t.Logf("\n%s", text.String())
	if row.Error != "" {
		t.Fatal(row.Error)
	}
	if strings.Join(order, ",") != "bare,bare,reservations,reservations" {
		t.Fatalf("searches ran in the order %v, want the bare handler first, each after a warm-up", order)
	}
	if capy.Subject.Target != subject.URL || capy.Baseline.Target != base.URL {
		t.Fatalf("targets %s, %s", capy.Subject.Target, capy.Baseline.Target)
	}
	if row.Subject.Rate != capy.Subject.Capacity || row.Baseline.Rate != capy.Baseline.Capacity ||
		row.Ratio != capy.Subject.Capacity/capy.Baseline.Capacity {
		t.Fatalf("row %+v from capacities %.0f and %.0f", row, capy.Subject.Capacity, capy.Baseline.Capacity)
	}
	if row.Ratio < 0.2 || row.Ratio > 1.2 {
		t.Errorf("ratio %.2f, want about 0.5 (within 0.2-1.2)", row.Ratio)
	}
	if row.Subject.P99 <= 0 || row.Subject.P99 > c.CapacityP99 || row.Subject.Count == 0 || row.P99Ratio != 0 {
		t.Errorf("the subject's step at capacity: %+v, p99 ratio %.2f", row.Subject, row.P99Ratio)
	}
	for _, s := range []*loadgen.CapacityReport{capy.Subject, capy.Baseline} {
		if s.Step != c.CapacityStep || s.P99Bound != c.CapacityP99 || len(s.Steps) < 2 {
			t.Errorf("search %+v, want steps of %s, bound %s", s, c.CapacityStep, c.CapacityP99)
		}
	}
	for _, want := range []string{"capacity at p99 <= 100ms", "bare handler: 200/s ", "reservations: 200/s "} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("no %q in the text", want)
		}
	}
}

// A search that fails or finds nothing leaves the row unmeasured, with both reasons.
func TestCapacityRowErrors(t *testing.T) {
	none := func(context.Context, loadgen.CapacitySearch) (*loadgen.CapacityReport, error) {
		return &loadgen.CapacityReport{Stopped: "no rate passed, down to 1/s"}, nil
	}
	broken := func(context.Context, loadgen.CapacitySearch) (*loadgen.CapacityReport, error) {
		return nil, errors.New("no system")
	}
	c := &Config{}
	c.capacityDefaults()
	var notes []string
	row, _ := capacityRow(context.Background(), c, none, broken, func(string, ...any) {}, &notes)
	if !strings.Contains(row.Error, "bare handler: no step passed") || !strings.Contains(row.Error,
		"reservations: no system") {
		t.Fatalf("error %q", row.Error)
	}
	if c.capacitySettings().Budget != 40*time.Second || row.Label != "capacity at p99 <= 50ms" {
		t.Fatalf("defaults: %+v, label %q", c.capacitySettings(), row.Label)
	}
}
