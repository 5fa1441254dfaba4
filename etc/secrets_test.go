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

// secretKey names a config field that holds a secret.
var secretKey = regexp.MustCompile(`^\s*-?\s*(\w*(Secret|Token|Password|Key))\s*:\s*(\S+)`)

// Every secret string written in a shipped config is one the services refuse: a secret
// anyone can read in the repository must never pass. A new example secret fails here
// until its digest is in internal/secrets (and is then refused everywhere).
func TestShippedSecretsRefused(t *testing.T) {
	var files []string
	for _, dir := range []string{".", "../deploy"} {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".env") || strings.HasSuffix(p, ".service")) {
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
		fh.Close()
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
	if !regexp.MustCompile(`(?m)^EnvironmentFile=/`).Match(raw) || regexp.MustCompile(`(?m)^EnvironmentFile=-`).Match(raw) {
		t.Fatalf("the unit must require its EnvironmentFile:\n%s", raw)
	}
}
