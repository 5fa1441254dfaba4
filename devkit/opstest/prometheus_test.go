package opstest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/testenv"
)

// prometheus is a real Prometheus server (Debian's binary) started by a test.
type prometheus struct {
	t    *testing.T
	base string
}

// startPrometheus runs Prometheus on a free loopback port, scraping target (host:port,
// path /metrics) every second and evaluating deploy/'s alert rules every second.
func startPrometheus(t *testing.T, target string) *prometheus {
	t.Helper()
	testenv.Need(t, devenv.PrometheusPackage)
	bin, err := devenv.LookPath("prometheus")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - %q
scrape_configs:
  - job_name: seckill-standalone
    static_configs:
      - targets: [%q]
`, rules, target)
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := devenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := devenv.Loopback(port)
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logf.Close()
	})
	p := &prometheus{t: t, base: "http://" + addr}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(p.base + "/-/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Fatalf("prometheus not ready on %s: %v\n%s", addr, err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// api GETs a Prometheus API path and decodes "data" into out.
func (p *prometheus) api(path string, q url.Values, out any) {
	p.t.Helper()
	resp, err := http.Get(p.base + path + "?" + q.Encode())
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil || env.Status != "success" {
		p.t.Fatalf("prometheus %s %v: %v %s", path, q, err, env.Error)
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		p.t.Fatal(err)
	}
}

// series reports whether Prometheus holds a series of the metric.
func (p *prometheus) series(name string) bool {
	var out []map[string]string
	p.api("/api/v1/series", url.Values{"match[]": {name},
		"start": {fmt.Sprint(time.Now().Add(-10 * time.Minute).Unix())}}, &out)
	return len(out) > 0
}

type alert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
}

func (p *prometheus) alerts() []alert {
	var out struct {
		Alerts []alert `json:"alerts"`
	}
	p.api("/api/v1/alerts", nil, &out)
	return out.Alerts
}

func waitUntil(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestOperatorViewOfASale runs a small sale on a standalone system scraped by a real
// Prometheus (one system per test binary: go-zero starts one DevServer per process):
//   - every metric the dashboard and the alert rules name is on the system's /metrics
//     (TestDeployMetricNamesExist in CI's words);
//   - Prometheus holds every one of those series, and no alert is pending or firing while
//     the books agree;
//   - SeckillReconcileMismatch fires once MySQL's inventory is changed behind the system's
//     back.
func TestOperatorViewOfASale(t *testing.T) {
	sys := startSystem(t, true)
	target := strings.TrimSuffix(strings.TrimPrefix(sys.MetricsURL, "http://"), "/metrics")
	prom := startPrometheus(t, target)
	r := smallSale(t, sys)
	checkDeployNamesServed(t, sys.MetricsURL)

	names := deployNames(t)
	var missing []string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		missing = missing[:0]
		for _, n := range names {
			if _, absent := absentWhenHealthy[n]; !absent && !prom.series(n) {
				missing = append(missing, n)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(missing) > 0 {
		t.Fatalf("not in Prometheus after 60 s: %v", missing)
	}
	time.Sleep(3 * time.Second)       // a few evaluations over the settled sale
	for _, a := range prom.alerts() { // neither firing nor pending
		t.Errorf("alert %s %s after a clean sale: %v", a.Labels["alertname"], a.State, a.Labels)
	}

	// Drift: three units vanish from MySQL's available, behind the system's back.
	cfg, err := mysql.ParseDSN(sys.MySQLDSN)
	if err != nil {
		t.Fatal(err)
	}
	db := testenv.MySQL(t) // only for its server connection
	if _, err := db.DB.ExecContext(context.Background(), fmt.Sprintf(
		"UPDATE `%s`.`inventory` SET `available` = `available` - 3 WHERE `activity_id` = ?", cfg.DBName),
		r.ActivityID); err != nil {
		t.Fatal(err)
	}
	activity := fmt.Sprint(r.ActivityID)
	waitUntil(t, "SeckillReconcileMismatch firing", 60*time.Second, func() bool {
		for _, a := range prom.alerts() {
			if a.Labels["alertname"] == "SeckillReconcileMismatch" && a.Labels["activity"] == activity && a.State == "firing" {
				return true
			}
		}
		return false
	})
	t.Logf("activity %s: SeckillReconcileMismatch fired; alerts now: %v", activity, prom.alerts())
}
