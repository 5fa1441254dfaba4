package etc_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/mq/mqserver"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// Every hop of the multi-node configs authenticates: Redis ACL users, Kafka SASL/SCRAM,
// etcd users, one MySQL user per service, and the events signed with one shared key.
func TestMultinodeAuthOnEveryHop(t *testing.T) {
	setSecrets(t)
	for _, k := range []string{"SECKILL_REDIS_RPC_PASSWORD", "SECKILL_REDIS_API_PASSWORD", "SECKILL_REDIS_MQ_PASSWORD",
		"SECKILL_KAFKA_RPC_PASSWORD", "SECKILL_KAFKA_MQ_PASSWORD", "SECKILL_ETCD_RPC_PASSWORD",
		"SECKILL_ETCD_CLIENT_PASSWORD", "SECKILL_MYSQL_RPC_PASSWORD", "SECKILL_MYSQL_MQ_PASSWORD"} {
		t.Setenv(k, "pw-"+strings.ToLower(k))
	}
	t.Setenv(kafkax.EnvEventKey, "9c1f0e7d4b2a58e3c6d9f1a0b7e4c2d85f3a6b9c0e1d4f7a2b5c8e3d6f9a0b1c")
	rc, ac, mc := loadMultinode(t)
	users := map[string][2]string{
		"rpc Redis":        {rc.StockRedis.User, rc.StockRedis.Pass},
		"api Redis":        {ac.Redis.User, ac.Redis.Pass},
		"mq Outbox.Redis":  {mc.Outbox.Redis.User, mc.Outbox.Redis.Pass},
		"rpc Relay.Kafka":  {rc.Relay.Kafka.User, rc.Relay.Kafka.Pass},
		"mq Kafka":         {mc.Kafka.User, mc.Kafka.Pass},
		"rpc Etcd":         {rc.Etcd.User, rc.Etcd.Pass},
		"api Inventory":    {ac.Inventory.Etcd.User, ac.Inventory.Etcd.Pass},
		"mq Inventory":     {mc.Inventory.Etcd.User, mc.Inventory.Etcd.Pass},
		"rpc MySQL (user)": {strings.SplitN(rc.Mysql.DataSource, ":", 2)[0], "-"},
		"mq MySQL (user)":  {strings.SplitN(mc.Mysql.DataSource, ":", 2)[0], "-"},
	}
	for hop, up := range users {
		if up[0] == "" || up[1] == "" || up[0] == "root" || up[0] == "default" {
			t.Errorf("%s: user %q, password set %v: want a service user with a password", hop, up[0], up[1] != "")
		}
	}
	if users["rpc Redis"][0] == users["api Redis"][0] || users["rpc MySQL (user)"][0] == users["mq MySQL (user)"][0] {
		t.Error("the services share a Redis or MySQL user")
	}
	for hop, m := range map[string]string{"rpc": rc.Relay.Kafka.Mechanism, "mq": mc.Kafka.Mechanism} {
		if !strings.HasPrefix(m, "SCRAM-SHA-") {
			t.Errorf("%s: Kafka SASL mechanism %q, want SCRAM", hop, m)
		}
	}
	if rc.Relay.EventKey == "" || rc.Relay.EventKey != mc.EventKey {
		t.Errorf("EventKey: rpc %q, mq %q: want the same key on both sides", rc.Relay.EventKey, mc.EventKey)
	}
}

// loadMultinode loads deploy/multinode's three configs through each service's loader.
func loadMultinode(t *testing.T) (rpcserver.Config, apiserver.Config, mqserver.Config) {
	t.Helper()
	rc, err := rpcserver.LoadConfig("../deploy/multinode/rpc.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ac, err := apiserver.LoadConfig("../deploy/multinode/api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	mc, err := mqserver.LoadConfig("../deploy/multinode/mq.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return rc, ac, mc
}

// Prometheus, Grafana and Jaeger listen on loopback only, Grafana without anonymous
// access; the systemd unit runs as its own user.
func TestDeployLockedDown(t *testing.T) {
	compose, err := os.ReadFile("../deploy/docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, port := range []string{"9090", "3000", "16686"} {
		if !regexp.MustCompile(`ports: \["127\.0\.0\.1:` + port + `:`).Match(compose) {
			t.Errorf("port %s is not bound to 127.0.0.1 in docker-compose.yml", port)
		}
	}
	if !strings.Contains(string(compose), `GF_AUTH_ANONYMOUS_ENABLED: "false"`) {
		t.Error("Grafana allows anonymous access")
	}
	if !regexp.MustCompile(`--user, "default", "off"`).Match(compose) {
		t.Error("Redis's default user is not off")
	}
	unit, err := os.ReadFile("../deploy/systemd/seckill@.service")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"User=seckill", "NoNewPrivileges=true", "ProtectSystem=strict"} {
		if !regexp.MustCompile(`(?m)^` + line + `$`).Match(unit) {
			t.Errorf("the systemd unit lacks %s", line)
		}
	}
}
