package etc_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var secretRef = regexp.MustCompile(`\$\{(SECKILL_[A-Z0-9_]+)\}`)

// gatewayOwnSecrets are the SECKILL_ variables the gateway reads itself, outside its config
// (string literals of api/'s code: BuyerAuth, MerchantAuth and whatever comes next).
func gatewayOwnSecrets(t *testing.T) []string {
	t.Helper()
	lit := regexp.MustCompile(`"(SECKILL_[A-Z0-9_]+)"`)
	var names []string
	err := filepath.WalkDir("../api", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		raw, err := os.ReadFile(p)
		for _, m := range lit.FindAllStringSubmatch(string(raw), -1) {
			names = append(names, m[1])
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// wantSecrets is what a service needs: the ${VAR}s of its config and, for the gateway,
// the ones it reads itself.
func wantSecrets(t *testing.T, bin, file string) []string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return secretsIn(t, bin, raw)
}

// secretsIn is wantSecrets of a config's content.
func secretsIn(t *testing.T, bin string, raw []byte) []string {
	t.Helper()
	var want []string
	for _, m := range secretRef.FindAllStringSubmatch(string(raw), -1) {
		want = append(want, m[1])
	}
	if bin == "api" {
		want = append(want, gatewayOwnSecrets(t)...)
	}
	slices.Sort(want)
	return slices.Compact(want)
}

// Each service of deploy/docker-compose.yml receives exactly the secrets its config
// references (and the gateway the ones it reads itself), each required (${VAR:?}): the
// internet-facing gateway holds no event key, no ops token, no other service's password.
func TestComposeSecretsPerService(t *testing.T) {
	n := 0
	for name, s := range loadCompose(t) {
		bin, file := seckillConfig(t, name, s)
		if bin == "" {
			continue
		}
		n++
		var have []string
		for k, v := range s.Environment {
			if !strings.HasPrefix(k, "SECKILL_") {
				continue
			}
			have = append(have, k)
			if v != "${"+k+":?}" {
				t.Errorf("%s: %s: %q, want ${%s:?} (required, no default)", name, k, v, k)
			}
		}
		slices.Sort(have)
		if want := wantSecrets(t, bin, file); !slices.Equal(have, want) {
			t.Errorf("%s (%s): environment %v, want exactly %v", name, file, have, want)
		}
	}
	if n == 0 {
		t.Fatal("no seckill service in docker-compose.yml")
	}
	// The secrets only the writer and the inventory service may hold.
	for _, k := range []string{"SECKILL_EVENT_KEY", "SECKILL_RPC_OPS_TOKEN", "SECKILL_MYSQL_RPC_PASSWORD",
		"SECKILL_MYSQL_MQ_PASSWORD", "SECKILL_ORDER_KEY"} {
		if slices.Contains(wantSecrets(t, "api", "../deploy/multinode/api.yaml"), k) {
			t.Errorf("the gateway needs %s", k)
		}
	}
}

// systemd gives each service its own environment file (seckill@rpc reads
// /etc/seckill/rpc.env), never one file for all.
func TestSystemdEnvironmentFilePerService(t *testing.T) {
	raw, err := os.ReadFile("../deploy/systemd/seckill@.service")
	if err != nil {
		t.Fatal(err)
	}
	files := regexp.MustCompile(`(?m)^EnvironmentFile=(.*)$`).FindAllStringSubmatch(string(raw), -1)
	if len(files) != 1 || !strings.Contains(files[0][1], "%i") {
		t.Fatalf("EnvironmentFile lines %v: want one, per instance (%%i)", files)
	}
	// The unit's list of what goes into each file is each service's config's.
	listed := map[string][]string{}
	current := ""
	for _, m := range regexp.MustCompile(`(?m)^#\s+(?:(rpc|api|mq)\.env\s+)?(SECKILL_.*)$`).
		FindAllStringSubmatch(string(raw), -1) {
		if m[1] != "" {
			current = m[1]
		}
		for _, v := range strings.Split(m[2], ", ") {
			listed[current] = append(listed[current], expandBraces(strings.TrimSuffix(strings.TrimSpace(v), ","))...)
		}
	}
	for _, bin := range []string{"rpc", "api", "mq"} {
		got := listed[bin]
		slices.Sort(got)
		if want := wantSecrets(t, bin, "../deploy/multinode/"+bin+".yaml"); !slices.Equal(got, want) {
			t.Errorf("seckill@.service lists %v for %s.env, want %v", got, bin, want)
		}
	}
}

// expandBraces expands one {a,b} group: SECKILL_{A,B}_X is SECKILL_A_X and SECKILL_B_X.
func expandBraces(s string) []string {
	open, end := strings.Index(s, "{"), strings.Index(s, "}")
	if open < 0 || end < open {
		return []string{s}
	}
	var out []string
	for _, alt := range strings.Split(s[open+1:end], ",") {
		out = append(out, s[:open]+alt+s[end+1:])
	}
	return out
}
