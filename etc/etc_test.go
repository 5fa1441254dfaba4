// Package etc_test checks that every shipped configuration loads into its service's
// Config (go-zero's loader: required fields, ranges, options) so a config cannot rot.
package etc_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeromicro/go-zero/core/trace"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/mq/mqserver"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// sets are the shipped configurations: the local ones (etc/) and the multi-node ones.
var sets = []struct{ dir, rpc, api, mq string }{
	{".", "inventory.yaml", "seckill-api.yaml", "mq.yaml"},
	{"../deploy/multinode", "rpc.yaml", "api.yaml", "mq.yaml"},
}

// setSecrets puts into the environment what the configs take from it (they hold no secret).
func setSecrets(t *testing.T) {
	t.Helper()
	t.Setenv("SECKILL_MYSQL_PASSWORD", "from-the-environment")
	t.Setenv("SECKILL_RPC_API_TOKEN", "c0ffee5e1f2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6e5")
	t.Setenv("SECKILL_RPC_MQ_TOKEN", "d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4")
	t.Setenv("SECKILL_RPC_OPS_TOKEN", "f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6")
	t.Setenv("SECKILL_ORDER_KEY", "e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4")
	// The shipped configs hold no secret: the gateway's come from the environment.
	t.Setenv(apiserver.EnvBuyerSecret, "5f0c2a9e7b4d1f8a3c6e0b9d2f5a8c1e4b7d0a3f6c9e2b5d")
	t.Setenv(apiserver.EnvMerchantSecret, "a1d4f7c0e3b6a9d2f5c8e1b4a7d0c3f6e9b2a5d8c1f4e7b0")
}

func TestShippedConfigsLoad(t *testing.T) {
	setSecrets(t)
	for _, s := range sets {
		t.Run(s.dir, func(t *testing.T) {
			rc, err := rpcserver.LoadConfig(filepath.Join(s.dir, s.rpc))
			if err != nil {
				t.Fatalf("%s: %v", s.rpc, err)
			}
			if rc.ListenOn == "" || rc.StockRedis.Host == "" || rc.Mysql.DataSource == "" {
				t.Fatalf("%s: incomplete: %+v", s.rpc, rc)
			}
			if strings.Contains(rc.Mysql.DataSource, "${") {
				t.Fatalf("%s: ${VAR} not expanded: %s", s.rpc, rc.Mysql.DataSource)
			}
			if len(rc.Middlewares.StatConf.IgnoreContentMethods) == 0 {
				t.Fatalf("%s: the hot methods must not log their content per request", s.rpc)
			}
			ac, err := apiserver.LoadConfig(filepath.Join(s.dir, s.api))
			if err != nil {
				t.Fatalf("%s: %v", s.api, err)
			}
			if err := ac.Validate(); err != nil {
				t.Fatalf("%s: %v", s.api, err)
			}
			if local := s.dir == "."; ac.Pay.BuyerConfirms != local {
				t.Fatalf("%s: Pay.BuyerConfirms %v: buyers confirm their own payments in etc/ only, deploy/ leaves "+
					"it to the provider's notification", s.api, ac.Pay.BuyerConfirms)
			}
			if ac.Middlewares.Breaker {
				t.Fatalf("%s: go-zero's HTTP breaker drops requests with a bare 503 (no code): keep it off", s.api)
			}
			if rc.Relay.Acknowledge != "kafka" {
				t.Fatalf("%s: Relay.Acknowledge %q, want kafka (nothing acknowledged lost with Redis's memory)",
					s.rpc, rc.Relay.Acknowledge)
			}
			if _, err := mqserver.LoadConfig(filepath.Join(s.dir, s.mq)); err != nil {
				t.Fatalf("%s: %v", s.mq, err)
			}
		})
	}
}

// The shipped local configs keep traces off (make run -trace turns them on); the multi-node
// ones send them over OTLP gRPC to the trace backend, a service of deploy/docker-compose.yml.
func TestTelemetryConfigs(t *testing.T) {
	setSecrets(t)
	compose, err := os.ReadFile("../deploy/docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sets {
		rc, err := rpcserver.LoadConfig(filepath.Join(s.dir, s.rpc))
		if err != nil {
			t.Fatal(err)
		}
		ac, err := apiserver.LoadConfig(filepath.Join(s.dir, s.api))
		if err != nil {
			t.Fatal(err)
		}
		mc, err := mqserver.LoadConfig(filepath.Join(s.dir, s.mq))
		if err != nil {
			t.Fatal(err)
		}
		for file, tel := range map[string]trace.Config{s.rpc: rc.Telemetry, s.api: ac.Telemetry, s.mq: mc.Telemetry} {
			name := filepath.Join(s.dir, file)
			if s.dir == "." {
				if !tel.Disabled {
					t.Errorf("%s: Telemetry on (%+v), want Disabled: make run -trace turns it on", name, tel)
				}
				continue
			}
			host, _, err := net.SplitHostPort(tel.Endpoint)
			if tel.Disabled || tel.Batcher != "otlpgrpc" || err != nil || tel.Name == "" || tel.Sampler <= 0 {
				t.Errorf("%s: Telemetry %+v, want OTLP gRPC to host:port, a name, a sampler above 0", name, tel)
				continue
			}
			if !strings.Contains(string(compose), "\n  "+host+":\n") {
				t.Errorf("%s: Telemetry.Endpoint %s: no service %q in deploy/docker-compose.yml", name, tel.Endpoint, host)
			}
		}
	}
}
