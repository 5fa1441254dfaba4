package config

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zeromicro/go-zero/core/service"

	"github.com/seckill/seckill/internal/secrets"
)

// CheckSecret says why secret is not fit to sign tokens (nil when it is); name is the
// config field, for the message.
func CheckSecret(name, secret string) error {
	if secret == "" {
		return fmt.Errorf("config: %s is missing (set %s or SecretsFile)", name, envOf(name))
	}
	return secrets.Check(name, secret)
}

func envOf(name string) string {
	if strings.HasPrefix(name, "Merchant") {
		return EnvMerchantSecret
	}
	return EnvBuyerSecret
}

// loadSecrets applies the secrets' sources in order: the config file (only outside pro
// mode), the SecretsFile, the environment. In pro mode a secret written in the config
// file itself is refused (configs live in repositories and images; secrets do not).
func (c *Config) loadSecrets() error {
	if c.Mode == service.ProMode {
		for _, s := range []struct{ name, val, env string }{
			{"BuyerAuth.AccessSecret", c.BuyerAuth.AccessSecret, EnvBuyerSecret},
			{"MerchantAuth.AccessSecret", c.MerchantAuth.AccessSecret, EnvMerchantSecret},
			{"PaymentAuth.Secret", c.PaymentAuth.Secret, EnvPaymentSecret},
		} {
			// ${VAR} in the file is expanded by the loader: that value came from the environment.
			if s.val != "" && s.val != os.Getenv(s.env) {
				return fmt.Errorf(
					"config: %s is written in the config file; in pro mode secrets come only from %s or SecretsFile",
					s.name,
					s.env,
				)
			}
		}
	}
	if c.SecretsFile != "" {
		vals, err := readSecretsFile(c.SecretsFile)
		if err != nil {
			return err
		}
		if v := vals[EnvBuyerSecret]; v != "" {
			c.BuyerAuth.AccessSecret = v
		}
		if v := vals[EnvMerchantSecret]; v != "" {
			c.MerchantAuth.AccessSecret = v
		}
		if v := vals[EnvPaymentSecret]; v != "" {
			c.PaymentAuth.Secret = v
		}
	}
	c.ApplyEnv()
	return nil
}

// readSecretsFile reads KEY=VALUE lines (the systemd EnvironmentFile format; # comments).
// The file must lie outside any source checkout and not be readable by others.
func readSecretsFile(path string) (map[string]string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("config: SecretsFile: %w", err)
	}
	if fi.Mode().Perm()&0o007 != 0 {
		return nil, fmt.Errorf(
			"config: SecretsFile %s is accessible to other users (mode %v): chmod 600 it",
			abs,
			fi.Mode().Perm(),
		)
	}
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return nil, fmt.Errorf(
				"config: SecretsFile %s is inside a source checkout (%s): keep secrets outside the repository",
				abs,
				dir,
			)
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	vals := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, errors.New("config: SecretsFile: a line is not KEY=VALUE")
		}
		vals[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"'`)
	}
	return vals, sc.Err()
}
