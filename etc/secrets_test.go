package etc_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/secrets"
)

// secretKey names a config field that holds a secret (go-zero's keys are PascalCase; a
// Kubernetes field such as topologyKey or automountServiceAccountToken is not one).
var secretKey = regexp.MustCompile(`^\s*-?\s*((?:[A-Z]\w*)?(Secret|Token|Password|Key))\s*:\s*(\S+)`)

// Every secret string written in a shipped config is one the services refuse: a secret
// anyone can read in the repository must never pass. A new example secret fails here
// until its digest is in internal/secrets (and is then refused everywhere).
func TestShippedSecretsRefused(t *testing.T) {
	var files []string
	for _, dir := range []string{".", "../deploy"} {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() &&
				(strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".env") || strings.HasSuffix(p, ".service")) {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) < 6 {
		t.Fatalf("found only %v", files)
	}
	found := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			m := secretKey.FindStringSubmatch(sc.Text())
			if m == nil || m[1] == "Key" || strings.HasPrefix(m[3], "${") || strings.HasPrefix(m[3], "#") {
				continue // Key: alone names a Redis key or an etcd key, not a secret
			}
			found++
			if err := secrets.Check(m[1], m[3]); err == nil || !secrets.Published(m[3]) {
				t.Errorf("%s: %s: %q is a shipped secret the services would accept or do not know as published", f, m[1], m[3])
			}
		}
		_ = fh.Close() // read only
	}
	t.Logf("%d files, %d literal secrets", len(files), found)
}

// The systemd unit does not start without its environment file (a leading "-" would let
// it start with no secrets).
func TestSystemdNeedsItsEnvironmentFile(t *testing.T) {
	raw, err := os.ReadFile("../deploy/systemd/seckill@.service")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^EnvironmentFile=/`).Match(raw) ||
		regexp.MustCompile(`(?m)^EnvironmentFile=-`).Match(raw) {
		t.Fatalf("the unit must require its EnvironmentFile:\n%s", raw)
	}
}

// The multi-node configs authenticate service-to-service calls.
func TestMultinodeLockedDown(t *testing.T) {
	t.Setenv("SECKILL_MYSQL_PASSWORD", "from-the-environment")
	t.Setenv("SECKILL_RPC_API_TOKEN", "c0ffee5e1f2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6e5")
	t.Setenv("SECKILL_RPC_MQ_TOKEN", "d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4")
	t.Setenv("SECKILL_RPC_OPS_TOKEN", "f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6")
	t.Setenv("SECKILL_ORDER_KEY", "e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4")
	rc, ac, mc := loadMultinode(t)
	if rc.OrderKey == "" || rc.Validate() != nil {
		t.Fatalf("rpc: OrderKey %q: %v", rc.OrderKey, rc.Validate())
	}
	if !rc.Auth || len(rc.Apps) != 3 {
		t.Fatalf("rpc: Auth %v, Apps %d", rc.Auth, len(rc.Apps))
	}
	tokens := map[string]string{}
	for _, a := range rc.Apps {
		tokens[a.App] = a.Token
	}
	for name, cli := range map[string]struct{ app, token string }{
		"api": {ac.Inventory.App, ac.Inventory.Token}, "mq": {mc.Inventory.App, mc.Inventory.Token}} {
		if cli.app != name || cli.token == "" || tokens[cli.app] != cli.token {
			t.Errorf("%s: zRPC credentials %q/%q do not match the rpc's Apps", name, cli.app, cli.token)
		}
	}
	// Metrics are served where Prometheus reaches them: TestMetricsReachableByPrometheus.
}
