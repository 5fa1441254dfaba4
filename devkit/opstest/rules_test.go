package opstest

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/testenv"
)

const rulesTestFile = "../../deploy/prometheus/alerts_test.yml"

// TestAlertRulesUnitTests runs promtool's unit tests of the alert rules
// (deploy/prometheus/alerts_test.yml): each alert tested there fires on the series it is
// given, after its `for`, and stays quiet on a healthy sample.
func TestAlertRulesUnitTests(t *testing.T) {
	testenv.Need(t, devenv.PrometheusPackage)
	bin, err := devenv.LookPath("promtool")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "test", "rules", rulesTestFile).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SUCCESS") {
		t.Fatalf("promtool test rules %s: %v\n%s", rulesTestFile, err, out)
	}
}
