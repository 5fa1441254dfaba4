package opstest

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const (
	runbookFile   = "../../docs/RUNBOOK.md"
	runbookPrefix = "docs/RUNBOOK.md#"
)

// anchors are the GitHub anchors of a Markdown file's headings: lower case, punctuation
// other than '-' and '_' dropped, spaces as '-'.
func anchors(md string) map[string]bool {
	drop := regexp.MustCompile(`[^a-z0-9 _-]`)
	out := map[string]bool{}
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		out[strings.ReplaceAll(drop.ReplaceAllString(h, ""), " ", "-")] = true
	}
	return out
}

// TestEveryAlertHasARunbook: every alert of deploy/prometheus/alerts.yml carries a
// runbook_url annotation pointing to a section of docs/RUNBOOK.md that exists.
func TestEveryAlertHasARunbook(t *testing.T) {
	raw, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(runbookFile)
	if err != nil {
		t.Fatal(err)
	}
	sections := anchors(string(md))
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			n++
			url := r.Annotations["runbook_url"]
			anchor, ok := strings.CutPrefix(url, runbookPrefix)
			switch {
			case !ok:
				t.Errorf("%s: runbook_url %q does not start with %q", r.Alert, url, runbookPrefix)
			case !sections[anchor]:
				t.Errorf("%s: runbook_url %q: no heading of %s has the anchor %q", r.Alert, url, runbookFile, anchor)
			}
		}
	}
	if n < 15 {
		t.Fatalf("only %d alerts in %s", n, rulesFile)
	}
}
