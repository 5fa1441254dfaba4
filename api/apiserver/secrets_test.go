package apiserver_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeromicro/go-zero/core/conf"

	"github.com/seckill/seckill/api/apiserver"
)

const (
	goodBuyer    = "b7e1c9a4f02d5836e9a1c4b7d0f3a6e9c2b5d8f1a4c7e0b3"
	goodMerchant = "m3f6a9c2e5b8d1f4a7c0e3b6d9f2a5c8e1b4d7f0a3c6e9b2"
)

// codeConfig is a valid gateway config built in code (no file), with both secrets set.
func codeConfig(t *testing.T) apiserver.Config {
	t.Helper()
	var c apiserver.Config
	if err := conf.FillDefault(&c); err != nil {
		t.Fatal(err)
	}
	c.Name, c.Host, c.Port, c.Mode = "secrets.test", "127.0.0.1", 0, "test"
	c.Inventory.Endpoints = []string{"127.0.0.1:1"}
	c.RateLimit.Enabled = false
	c.AddrLimit.Enabled = false
	c.BuyerAuth.AccessSecret, c.MerchantAuth.AccessSecret = goodBuyer, goodMerchant
	return c
}

// badSecrets: each is refused, with a message naming why.
var badSecrets = []struct{ name, secret, why string }{
	{"missing", "", "missing"},
	{"short", "Zx8#kQ2!vB7@", "too short"},
	{"low entropy", strings.Repeat("ab", 24), "entropy"},
	{"one character", strings.Repeat("x", 64), "entropy"},
	{"sequential", "abcdefghijklmnopqrstuvwxyz012345", "entropy"},
	{"sequential digits", "0123456789012345678901234567890123456789", "entropy"},
	{"published (etc, buyer)", "demo-buyer-secret-change-me", "published"},
	{"published (etc, merchant)", "demo-merchant-secret-change-me", "published"},
	{"published (deploy, buyer)", "set-SECKILL_BUYER_SECRET-in-the-environment", "published"},
	{"published (deploy, merchant)", "set-SECKILL_MERCHANT_SECRET-in-the-environment", "published"},
}

func TestGatewayRefusesBadSecrets(t *testing.T) {
	good := codeConfig(t)
	if err := good.Validate(); err != nil {
		t.Fatalf("the good config is refused: %v", err)
	}
	for _, tc := range badSecrets {
		for _, which := range []string{"buyer", "merchant"} {
			t.Run(tc.name+"/"+which, func(t *testing.T) {
				c := codeConfig(t)
				if which == "buyer" {
					c.BuyerAuth.AccessSecret = tc.secret
				} else {
					c.MerchantAuth.AccessSecret = tc.secret
				}
				s, err := apiserver.New(c)
				if err == nil {
					s.Stop()
					t.Fatalf("secret %q accepted", tc.secret)
				}
				if !strings.Contains(err.Error(), tc.why) || !strings.Contains(strings.ToLower(err.Error()), which) {
					t.Fatalf("unclear message for %q: %v (want it to name %q and %s)", tc.secret, err, tc.why, which)
				}
			})
		}
	}
	t.Run("the same secret twice", func(t *testing.T) {
		c := codeConfig(t)
		c.MerchantAuth.AccessSecret = c.BuyerAuth.AccessSecret
		if _, err := apiserver.New(c); err == nil || !strings.Contains(err.Error(), "different") {
			t.Fatalf("got %v", err)
		}
	})
}

// writeConfig writes the shipped gateway config with extra YAML appended.
func writeConfig(t *testing.T, extra string) string {
	t.Helper()
	raw, err := os.ReadFile("../../etc/seckill-api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "api.yaml")
	if err := os.WriteFile(p, append(raw, []byte(extra)...), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProModeSecretsOnlyFromEnvironmentOrFile(t *testing.T) {
	t.Run("the shipped file alone: missing", func(t *testing.T) {
		t.Setenv(apiserver.EnvBuyerSecret, "")
		t.Setenv(apiserver.EnvMerchantSecret, "")
		c, err := apiserver.LoadConfig("../../etc/seckill-api.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "missing") {
			t.Fatalf("got %v, want missing", err)
		}
	})
	t.Run("from the environment", func(t *testing.T) {
		t.Setenv(apiserver.EnvBuyerSecret, goodBuyer)
		t.Setenv(apiserver.EnvMerchantSecret, goodMerchant)
		c, err := apiserver.LoadConfig("../../etc/seckill-api.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err != nil || c.BuyerAuth.AccessSecret != goodBuyer ||
			c.MerchantAuth.AccessSecret != goodMerchant {
			t.Fatalf("%v %+v %+v", err, c.BuyerAuth, c.MerchantAuth)
		}
	})
	t.Run("written in the pro config file: refused", func(t *testing.T) {
		t.Setenv(apiserver.EnvBuyerSecret, "")
		t.Setenv(apiserver.EnvMerchantSecret, goodMerchant)
		p := writeConfig(t, "\nBuyerAuth:\n  AccessSecret: "+goodBuyer+"\n")
		if _, err := apiserver.LoadConfig(p); err == nil || !strings.Contains(err.Error(), "config file") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("${VAR} in the pro config file: from the environment", func(t *testing.T) {
		t.Setenv(apiserver.EnvBuyerSecret, goodBuyer)
		t.Setenv(apiserver.EnvMerchantSecret, goodMerchant)
		p := writeConfig(t, "\nBuyerAuth:\n  AccessSecret: ${SECKILL_BUYER_SECRET}\n")
		c, err := apiserver.LoadConfig(p)
		if err != nil || c.Validate() != nil {
			t.Fatalf("%v", err)
		}
	})
	t.Run("secrets file", func(t *testing.T) {
		t.Setenv(apiserver.EnvBuyerSecret, "")
		t.Setenv(apiserver.EnvMerchantSecret, "")
		dir := t.TempDir()
		sf := filepath.Join(dir, "secrets.env")
		body := "# seckill\nSECKILL_BUYER_SECRET=" + goodBuyer + "\nSECKILL_MERCHANT_SECRET=" + goodMerchant + "\n"
		if err := os.WriteFile(sf, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := apiserver.LoadConfig(writeConfig(t, "\nSecretsFile: "+sf+"\n"))
		if err != nil || c.Validate() != nil || c.BuyerAuth.AccessSecret != goodBuyer {
			t.Fatalf("%v %+v", err, c.BuyerAuth)
		}
		if err := os.Chmod(sf, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := apiserver.LoadConfig(writeConfig(t, "\nSecretsFile: "+sf+"\n")); err == nil ||
			!strings.Contains(err.Error(), "other users") {
			t.Fatalf("a world-readable secrets file: got %v", err)
		}
		// Inside the repository (this checkout has a .git above the test's directory).
		in := filepath.Join(".", "testdata-secrets.env")
		if err := os.WriteFile(in, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = os.Remove(in) }()
		if _, err := apiserver.LoadConfig(writeConfig(t, "\nSecretsFile: "+in+"\n")); err == nil ||
			!strings.Contains(err.Error(), "source checkout") {
			t.Fatalf("a secrets file in the repository: got %v", err)
		}
	})
}

// TestMainRefusesBadSecrets runs the real gateway binary: it exits 1 with the reason.
func TestMainRefusesBadSecrets(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "api")
	build := exec.Command("go", "build", "-tags", "no_k8s", "-o", bin, "github.com/seckill/seckill/api")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, tc := range badSecrets {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, "-f", "../../etc/seckill-api.yaml")
			cmd.Env = append(
				os.Environ(),
				apiserver.EnvBuyerSecret+"="+tc.secret,
				apiserver.EnvMerchantSecret+"="+goodMerchant,
			)
			out, err := cmd.CombinedOutput()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 1 {
				t.Fatalf("exit: %v, want status 1\n%s", err, out)
			}
			if !strings.Contains(string(out), "refusing to start") || !strings.Contains(string(out), tc.why) {
				t.Fatalf("unclear message: %s", out)
			}
		})
	}
}
