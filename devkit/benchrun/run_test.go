package benchrun

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/standalone"
	"github.com/seckill/seckill/devkit/testenv"
)

// TestRunTiny runs the HTTP half of `make bench` with tiny numbers against the standalone
// system on testenv's Redis and MySQL (the Go half is `go test -bench` in a subprocess,
// whose output parsing is tested above): every request of every measurement must come
// back well-formed under the benchmark profile, and the sale must pass its checks.
func TestRunTiny(t *testing.T) {
	_, keys := testenv.Redis(t) // skips (or fails under CI) without Redis
	db := testenv.MySQL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var progress strings.Builder
	const n = 150
	profiles := t.TempDir()
	res, err := Run(ctx, Config{
		Dir: "../..", SkipGo: true, SkipDegrade: true, SkipRedis: true, SkipCapacity: true, // TestRunDegradeTiny,
		// TestRedisRowTiny, TestCapacityRowFromTwoSearches; the production profile's system (deploy/'s
		// multi-node files as processes) is too big for a unit test: prod_test.go tests its rows and configs
		SkipProd:    true,
		Standalone:  standalone.Config{RedisAddr: testenv.RedisAddr(), MySQLDSN: db.DSN, KeyPrefix: keys.Prefix},
		Concurrency: 8, Requests: n, MaxDuration: 20 * time.Second, StormStock: 10, StormBuyers: 3 * n,
		SaleStock: 10, SaleBuyers: 3 * n, SaleConc: 8, SalePprof: profiles, SalePprofFor: time.Second,
		Rounds: 2, Log: &progress,
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
	if res.Profile.Name != "noshed-dev" || res.Sale == nil || !res.Sale.OK {
		t.Fatalf("profile %q, sale %+v", res.Profile.Name, res.Sale)
	}
	var labels []string
	for _, row := range res.Rows {
		labels = append(labels, row.Label)
	}
	if want := []string{"reservations", "reservations vs bare", "sold-out rejections",
		"sold-out storm", "sale vs bare"}; !slices.Equal(labels, want) {
		t.Fatalf("rows %q, want %q", labels, want)
	}
	if vs := res.Rows[1]; vs.Subject.Name != res.Rows[0].Subject.Name || vs.Baseline.Name != res.Rows[2].Baseline.Name {
		t.Errorf("reservations vs bare: %q beside %q, want the reservations beside the bare handler", vs.Subject.Name,
			vs.Baseline.Name)
	}
	for _, row := range res.Rows {
		for i, m := range []Measurement{row.Subject, row.Baseline} {
			want := n
			if row.Label == "sold-out storm" && i == 0 || row.Label == "sale vs bare" {
				want = 3 * n // the sale's buyers, and as many bare requests
			}
			if m.Count != want || m.OtherCount() != 0 || m.NotSent != 0 || m.Rate <= 0 || m.P99 <= 0 {
				t.Errorf("%s: counted %d of %d, other %v, not sent %d, rate %f, p99 %s", m.Name, m.Count, want, m.Other, m.NotSent,
					m.Rate, m.P99)
			}
		}
		if row.Ratio <= 0 || row.P99Ratio <= 0 || len(row.Rounds) != 2 || !slices.Contains(row.Rounds, row.Ratio) {
			t.Errorf("%s: ratio %f, p99 ratio %f, rounds %v", row.Label, row.Ratio, row.P99Ratio, row.Rounds)
		}
	}
	sale := res.Rows[4]
	want := []string{MetricSaleP99, MetricBareP99, MetricBareCPU}
	if _, ok := sale.Subject.Metrics[metricCPU+"bench"]; ok { // only with processes of its own (cpuCost)
		want = append(want, MetricSaleCPU)
	}
	for _, k := range want {
		if v := sale.Metrics[k]; v <= 0 {
			t.Errorf("sale vs bare: metric %q = %v, metrics %v", k, v, sale.Metrics)
		}
	}
	if sale.Metrics[MetricSaleP99] != ms(sale.Subject.P99) || sale.Metrics[MetricBareP99] != ms(sale.Baseline.P99) {
		t.Errorf("sale vs bare: metrics %v, p99s %s and %s", sale.Metrics, sale.Subject.P99, sale.Baseline.P99)
	}
	for _, name := range []string{"sale-bare", "sale"} { // the first round's profiles (SalePprof)
		file := filepath.Join(profiles, name+".pprof")
		if st, err := os.Stat(file); err != nil || st.Size() == 0 ||
			!strings.Contains(strings.Join(res.Notes, "\n"), file) {
			t.Errorf("CPU profile %s: %v (notes %v)", file, err, res.Notes)
		}
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "checked strictly (409 and JSON code SOLD_OUT): ok") {
		t.Errorf("the strict rejection probe did not pass: %v", res.Notes)
	}
}
