package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/seckill/seckill/devkit/devenv"
)

// prometheus is Debian's prometheus binary on deploy/prometheus/prometheus.yml, its targets
// replaced by the instances' addresses (the overlay), deploy/prometheus/alerts.yml loaded.
type prometheus struct {
	base      string
	cmd       *exec.Cmd
	unscraped []string // instances running here that prometheus.yml does not name
	notRun    []string // jobs of prometheus.yml not of the project's services (exporters): left out
}

// startPrometheus writes the overlaid config into s.Dir and starts Prometheus on a free
// loopback port.
func startPrometheus(ctx context.Context, s *System) (*prometheus, error) {
	bin, err := devenv.LookPath("prometheus")
	if err != nil {
		return nil, fmt.Errorf("prometheus not installed (apt-get install -y prometheus): %w", err)
	}
	port, err := devenv.FreePort()
	if err != nil {
		return nil, err
	}
	addr := devenv.Loopback(port)
	p := &prometheus{base: "http://" + addr}
	dir := filepath.Join(s.Dir, "prometheus")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cfg, err := p.config(filepath.Join(s.Deploy.Dir, "prometheus"), s.Deploy.Targets, addr)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(file, cfg, 0o600); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		return nil, err
	}
	p.cmd = exec.CommandContext(ctx, bin, "--config.file="+file, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.cmd.SysProcAttr = devenv.ChildProcAttr()
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
		_ = logf.Close()
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if resp, err := http.Get(p.base + "/-/ready"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("prometheus not ready on %s (log %s)", addr, logf.Name())
		}
	}
}

// config is deploy/prometheus/prometheus.yml with each target's host replaced by the
// address of the instance of that name (api-1:9102: api-1's metrics address; prometheus's
// own localhost:9090: self), and the rule files made absolute. A target naming no instance
// here stays as it is (and is down); instances no target names are listed in p.unscraped.
// Jobs other than seckill-* and prometheus (exporters, which cannot run here) are left out
// and listed in p.notRun.
func (p *prometheus) config(dir string, instances map[string]string, self string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(dir, "prometheus.yml"))
	if err != nil {
		return nil, err
	}
	var doc struct {
		Global  map[string]any   `yaml:"global"`
		Rules   []string         `yaml:"rule_files"`
		Scrapes []map[string]any `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	for i, r := range doc.Rules {
		if doc.Rules[i], err = filepath.Abs(filepath.Join(dir, r)); err != nil {
			return nil, err
		}
	}
	scraped := map[string]bool{}
	kept := doc.Scrapes[:0]
	for _, job := range doc.Scrapes {
		name := fmt.Sprint(job["job_name"])
		if !strings.HasPrefix(name, "seckill-") && name != "prometheus" { // an exporter's: not run here
			p.notRun = append(p.notRun, name)
			continue
		}
		kept = append(kept, job)
		var statics []struct {
			Targets []string `yaml:"targets"`
		}
		raw, _ := yaml.Marshal(job["static_configs"])
		if err := yaml.Unmarshal(raw, &statics); err != nil {
			return nil, err
		}
		var out []any
		for _, sc := range statics {
			var ts []string
			for _, t := range sc.Targets {
				host, _, _ := strings.Cut(t, ":")
				switch addr, ok := instances[host]; {
				case ok:
					t, scraped[host] = addr, true
				case job["job_name"] == "prometheus":
					t = self
				}
				ts = append(ts, t)
			}
			out = append(out, map[string]any{"targets": ts})
		}
		job["static_configs"] = out
	}
	doc.Scrapes = kept
	for name := range instances {
		if !scraped[name] {
			p.unscraped = append(p.unscraped, name)
		}
	}
	sort.Strings(p.unscraped)
	return yaml.Marshal(map[string]any{"global": doc.Global, "rule_files": doc.Rules, "scrape_configs": doc.Scrapes})
}

// get GETs an API path and decodes its data into out.
func (p *prometheus) get(ctx context.Context, path string, q url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+path+"?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return err
	}
	if body.Status != "success" {
		return fmt.Errorf("prometheus %s: %s", path, body.Error)
	}
	return json.Unmarshal(body.Data, out)
}

type promTarget struct {
	Labels    map[string]string `json:"labels"`
	Health    string            `json:"health"`
	LastError string            `json:"lastError"`
}

// targets are the active targets.
func (p *prometheus) targets(ctx context.Context) ([]promTarget, error) {
	var d struct {
		Active []promTarget `json:"activeTargets"`
	}
	err := p.get(ctx, "/api/v1/targets", url.Values{"state": {"active"}}, &d)
	return d.Active, err
}

// rules counts the alerting rules loaded.
func (p *prometheus) rules(ctx context.Context) (int, error) {
	var d struct {
		Groups []struct {
			Rules []struct {
				Type string `json:"type"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := p.get(ctx, "/api/v1/rules", nil, &d); err != nil {
		return 0, err
	}
	n := 0
	for _, g := range d.Groups {
		for _, r := range g.Rules {
			if r.Type == "alerting" {
				n++
			}
		}
	}
	return n, nil
}

type promAlert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
}

// alerts are the alerts pending or firing now.
func (p *prometheus) alerts(ctx context.Context) ([]promAlert, error) {
	var d struct {
		Alerts []promAlert `json:"alerts"`
	}
	err := p.get(ctx, "/api/v1/alerts", nil, &d)
	return d.Alerts, err
}

// checks: every instance running here a target of prometheus.yml and every target up,
// deploy's rules loaded, no alert firing (pending ones named).
// Waits two scrape intervals past the sale so that the last scrape is recent.
func (p *prometheus) checks(ctx context.Context) []Check {
	time.Sleep(11 * time.Second)
	ts, err := p.targets(ctx)
	var down []string
	for _, t := range ts {
		if t.Health != "up" {
			down = append(down, fmt.Sprintf("%s %s: %s %s", t.Labels["job"], t.Labels["instance"], t.Health, t.LastError))
		}
	}
	ok := err == nil && len(ts) > 0 && len(down) == 0 && len(p.unscraped) == 0 // each process a target
	out := []Check{check("Prometheus: every process a target, every target up", ok,
		"up %d of %d targets of deploy/prometheus/prometheus.yml; instances it does not name: %s; exporters' "+
			"jobs, which cannot run here, not counted: %s%s", len(ts)-len(down), len(ts),
		orNone(p.unscraped), orNone(p.notRun), reasons(append(down, errText(err)...)))}
	n, err := p.rules(ctx)
	out = append(out, check("Prometheus: deploy/prometheus/alerts.yml loaded", err == nil && n > 0,
		"%d alerting rules%s", n, reasons(errText(err))))
	as, err := p.alerts(ctx)
	var firing, pending []string
	for _, a := range as {
		name := a.Labels["alertname"] + labelsOf(a.Labels)
		if a.State == "firing" {
			firing = append(firing, name)
		} else {
			pending = append(pending, name)
		}
	}
	return append(out, check("Prometheus: no alert firing after the sale", err == nil && len(firing) == 0,
		"firing: %s; pending: %s%s", orNone(firing), orNone(pending), reasons(errText(err))))
}

func labelsOf(l map[string]string) string {
	var kv []string
	for k, v := range l {
		if k != "alertname" && k != "severity" {
			kv = append(kv, k+"="+v)
		}
	}
	sort.Strings(kv)
	return "{" + strings.Join(kv, ",") + "}"
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func errText(err error) []string {
	if err == nil {
		return nil
	}
	return []string{err.Error()}
}
