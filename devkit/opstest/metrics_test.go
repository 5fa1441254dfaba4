package opstest

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

const (
	dashboardFile = "../../deploy/grafana/dashboards/seckill-sale.json"
	rulesFile     = "../../deploy/prometheus/alerts.yml"
)

// metricName: the project's series and go-zero's HTTP server series the gateway panels use.
var metricName = regexp.MustCompile(`\b(seckill|http_server_requests)_[a-z0-9_]+`)

// absentWhenHealthy are series that exist only while something is wrong (deleted once it is
// over), so a clean sale does not serve them: the file that declares each, checked instead.
var absentWhenHealthy = map[string]struct{ file, decl string }{
	"seckill_inventory_degraded": {"../../rpc/internal/degrade/fence.go", `Name:      "degraded",`},
}

// deployNames are the metric names the dashboard's queries and the alert rules use.
func deployNames(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("%s is not valid JSON: %v", dashboardFile, err)
	}
	var text strings.Builder
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			text.WriteString(tg.Expr + "\n")
		}
	}
	for _, v := range dash.Templating.List {
		text.WriteString(v.Definition + "\n")
	}
	rules, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(rules), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") { // comments may name anything
			text.WriteString(line + "\n")
		}
	}
	set := map[string]bool{}
	for _, n := range metricName.FindAllString(text.String(), -1) {
		set[n] = true
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) < 15 {
		t.Fatalf("only %d metric names found in the dashboard and the rules: %v", len(names), names)
	}
	return names
}

// exposed are the series names a /metrics page serves.
func exposed(t *testing.T, url string) map[string]bool {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	out := map[string]bool{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			out[line[:i]] = true
		}
	}
	return out
}

// checkDeployNamesServed: every metric the dashboard and the alert rules name is served
// by the running system (its /metrics is the code's registry).
func checkDeployNamesServed(t *testing.T, metricsURL string) {
	t.Helper()
	got := exposed(t, metricsURL)
	var missing []string
	for _, n := range deployNames(t) {
		if a, ok := absentWhenHealthy[n]; ok && !got[n] {
			if src, err := os.ReadFile(a.file); err != nil || !strings.Contains(string(src), a.decl) {
				missing = append(missing, n+" (not declared in "+a.file+")")
			}
			continue
		}
		if !got[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("named in deploy/ but not served by the system: %v", missing)
	}
}
