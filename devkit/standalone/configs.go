package standalone

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"

	"github.com/zeromicro/go-zero/core/discov"
	"github.com/zeromicro/go-zero/core/service"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/mq/mqserver"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// Configs are the three services' configurations as they run.
type Configs struct {
	Inventory rpcserver.Config
	Writer    mqserver.Config
	Gateway   apiserver.Config
}

// buildConfigs loads each service's YAML from the etc directory through the service's own
// LoadConfig and points it at this system's servers. The fields are typed: renaming one
// breaks this file at compile time.
func (s *System) buildConfigs(cfg Config, apiHost string, apiPort, metricsPort int) error {
	load := func(name string, into func(string) error) error {
		if err := into(filepath.Join(cfg.EtcDir, name)); err != nil {
			return fmt.Errorf("%s: %w (run from the repository root, or pass the etc directory)", name, err)
		}
		return nil
	}
	c := &s.Configs
	if err := load("inventory.yaml", func(f string) (err error) {
		c.Inventory, err = rpcserver.LoadConfig(f)
		return
	}); err != nil {
		return err
	}
	if err := load("mq.yaml", func(f string) (err error) { c.Writer, err = mqserver.LoadConfig(f); return }); err != nil {
		return err
	}
	if err := load("seckill-api.yaml", func(f string) (err error) {
		c.Gateway, err = apiserver.LoadConfig(f)
		return
	}); err != nil {
		return err
	}

	inv := &c.Inventory
	s.common(&inv.ServiceConf, cfg)
	inv.ListenOn = s.RPCAddr
	inv.Etcd = discov.EtcdConf{}
	inv.StockRedis.Host, inv.StockRedis.Type = s.RedisAddr, "node"
	inv.KeyPrefix = s.KeyPrefix
	inv.Mysql.DataSource = s.MySQLDSN
	inv.Relay.Brokers = s.KafkaBrokers

	w := &c.Writer
	s.common(&w.ServiceConf, cfg)
	w.Consumer.Brokers = s.KafkaBrokers
	w.DeadLetter.Brokers = s.KafkaBrokers
	w.Mysql.DataSource = s.MySQLDSN
	w.Outbox.Redis, w.Outbox.KeyPrefix = inv.StockRedis, inv.KeyPrefix
	// The jobs (expiry, reconciliation, scheduled warm-up) call the inventory rpc.
	w.Inventory.Endpoints, w.Inventory.Etcd = []string{s.RPCAddr}, discov.EtcdConf{}

	g := &c.Gateway
	s.common(&g.ServiceConf, cfg)
	g.Host, g.Port = apiHost, apiPort
	// go-zero starts one DevServer per process: the gateway's serves the metrics.
	g.DevServer.Enabled, g.DevServer.Host, g.DevServer.Port = true, "127.0.0.1", metricsPort
	g.Inventory.Endpoints, g.Inventory.Etcd = []string{s.RPCAddr}, discov.EtcdConf{}
	g.Redis.Host, g.Redis.Type = s.RedisAddr, "node"
	g.KeyPrefix = s.KeyPrefix
	Secure(inv, w, g)
	if cfg.Trace != "" {
		tel, err := Telemetry(cfg.Trace, cfg.TraceHeaders)
		if err != nil {
			return err
		}
		inv.Telemetry, w.Telemetry, g.Telemetry = tel, tel, tel
	}
	return nil
}

// Secure gives one local system fresh secrets, as every run of it must have (the shipped
// configs hold none, and a published one is refused): JWT secrets, the payment provider's
// signing secret, the order-number key, the
// event key, and zRPC authentication on with a fresh token for each app the inventory config lists (the
// gateway's and the writer's jobs' among them), as in a multi-node deployment. Every
// simulated buyer of a local load comes from 127.0.0.1, so the per-address limit is off (the
// per-user limit stays). The fault suite uses it too.
func Secure(inv *rpcserver.Config, w *mqserver.Config, g *apiserver.Config) {
	inv.OrderKey = freshSecret()
	inv.Relay.EventKey = freshSecret() // events signed by the relay, checked by the writer
	w.EventKey = inv.Relay.EventKey
	inv.Auth = true
	for i := range inv.Apps { // the apps and their methods as etc/inventory.yaml lists them
		a := &inv.Apps[i]
		a.Token = freshSecret()
		switch a.App {
		case "api":
			g.Inventory.App, g.Inventory.Token = a.App, a.Token
		case "mq":
			w.Inventory.App, w.Inventory.Token = a.App, a.Token
		}
	}
	g.AddrLimit.Enabled = false
	g.BuyerAuth.AccessSecret, g.MerchantAuth.AccessSecret = freshSecret(), freshSecret()
	g.PaymentAuth.Secret = freshSecret()
}

// freshSecret is 32 random bytes, hex-encoded.
func freshSecret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}

// common sets what every service of one process shares: mode, logging (go-zero sets its
// logger up once per process: the first service's settings hold for all), and no DevServer
// of its own.
func (s *System) common(sc *service.ServiceConf, cfg Config) {
	sc.Mode = cfg.Mode
	sc.Log.Level, sc.Log.Encoding, sc.Log.Stat = cfg.LogLevel, "plain", false
	if cfg.LogDir != "" {
		sc.Log.Mode, sc.Log.Path = "file", cfg.LogDir
	}
	sc.DevServer.Enabled = false
}
