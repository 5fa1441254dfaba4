package standalone

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/loadgen"
	"github.com/seckill/seckill/devkit/testenv"
)

// sale runs the load generator against a started system and requires a clean sale.
func sale(t *testing.T, sys *System) *loadgen.Report {
	t.Helper()
	var progress strings.Builder
	r, err := loadgen.Run(context.Background(), loadgen.Config{
		BaseURL: sys.APIURL, BuyerSecret: sys.BuyerSecret, MerchantSecret: sys.MerchantSecret,
		Buyers: 1000, Concurrency: 16, Stock: 50, MaxDuration: 20 * time.Second,
		// The pay timeout outlasts the reserve phase's bound, so nothing returns while
		// buyers arrive; 10 of the 50 orders are left to the expiry job.
		PayTimeout: 22 * time.Second, PayFraction: 0.6, CancelFraction: 0.2,
		ReconcileWait: 30 * time.Second, Progress: &progress,
	})
	if err != nil {
		t.Fatalf("sale: %v\n%s", err, progress.String())
	}
	var text strings.Builder
	r.WriteText(&text)
	if !r.OK() || r.Reserved != 50 || r.SoldOut != 950 || r.FinalStatuses["expired"] != 10 || r.Reconcile != "consistent" {
		t.Fatalf("sale failed:\n%s", text.String())
	}
	t.Logf("\n%s", text.String())
	return r
}

func start(t *testing.T, cfg Config) *System {
	t.Helper()
	cfg.EtcDir = "../../etc"
	cfg.APIAddr = "127.0.0.1:0"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sys, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return sys
}

func TestStandaloneOnItsOwnServers(t *testing.T) {
	for _, pkg := range []devenv.Package{devenv.RedisPackage, devenv.MariaDBPackage} {
		testenv.Need(t, pkg)
	}
	sys := start(t, Config{})
	closed := false
	defer func() {
		if !closed {
			sys.Close()
		}
	}()
	if got := strings.Join(sys.Private, ","); got != "redis,mariadb,kafka" {
		t.Fatalf("started %q, want its own redis, mariadb and kafka", got)
	}
	// Its own servers, not the ones on the default ports.
	for _, addr := range []string{sys.RedisAddr, sys.KafkaBrokers[0]} {
		if _, port, _ := net.SplitHostPort(addr); port == "6379" || port == "3306" || port == "9092" {
			t.Fatalf("%s is a default port", addr)
		}
	}
	if strings.Contains(sys.MySQLDSN, ":3306)") {
		t.Fatalf("MySQL %s is the default server", sys.MySQLDSN)
	}
	if sys.Configs.Inventory.ListenOn != sys.RPCAddr || sys.Configs.Gateway.Inventory.Endpoints[0] != sys.RPCAddr ||
		sys.Configs.Writer.Inventory.Endpoints[0] != sys.RPCAddr {
		t.Fatalf("services not wired to the inventory rpc %s: %+v", sys.RPCAddr, sys.Configs)
	}
	sale(t, sys)

	sys.Close()
	closed = true
	api := strings.TrimPrefix(sys.APIURL, "http://")
	for _, addr := range []string{sys.RedisAddr, sys.KafkaBrokers[0], api, sys.RPCAddr} {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.Close()
			t.Errorf("%s still accepts connections after Close (redis %s, kafka %v, api %s, rpc %s)",
				addr, sys.RedisAddr, sys.KafkaBrokers, sys.APIURL, sys.RPCAddr)
		}
	}
}

func TestStandaloneOnGivenServers(t *testing.T) {
	// testenv's servers (SECKILL_TEST_REDIS / SECKILL_TEST_MYSQL): already running, given
	// by address; a fresh database each run.
	// The shared Redis gets this test's own key prefix (deleted afterwards), as a fresh
	// database hands out activity ids that other runs have used there.
	_, keys := testenv.Redis(t) // skips (or fails under CI) when Redis is not there
	db := testenv.MySQL(t)
	sys := start(t, Config{RedisAddr: testenv.RedisAddr(), MySQLDSN: db.DSN, KeyPrefix: keys.Prefix})
	defer sys.Close()
	if got := strings.Join(sys.Private, ","); got != "kafka" {
		t.Fatalf("started %q, want only kafka", got)
	}
	if sys.RedisAddr != testenv.RedisAddr() || !strings.Contains(sys.MySQLDSN, db.Name) {
		t.Fatalf("not using the given servers: %s %s", sys.RedisAddr, sys.MySQLDSN)
	}
	r := sale(t, sys)
	// The ledger is the given database.
	var sold int64
	if err := db.DB.QueryRow("SELECT sold FROM inventory WHERE activity_id = ?", r.ActivityID).Scan(&sold); err != nil {
		t.Fatal(err)
	}
	if sold != int64(r.Paid()) {
		t.Fatalf("given MySQL has sold %d, want %d", sold, r.Paid())
	}
}

func TestServiceDSN(t *testing.T) {
	for _, tc := range []struct{ in, db, want string }{
		{"root:@tcp(127.0.0.1:3306)/", "seckill", "parseTime=true"},
		{"u:p@tcp(db:3306)/shop", "shop", "parseTime=true"},
	} {
		dsn, db, err := serviceDSN(tc.in)
		if err != nil || db != tc.db || !strings.Contains(dsn, tc.want) || !strings.Contains(dsn, "/"+tc.db) {
			t.Errorf("serviceDSN(%q) = %q, %q, %v", tc.in, dsn, db, err)
		}
	}
}

func TestBuildConfigs(t *testing.T) {
	sys := &System{RPCAddr: "127.0.0.1:1", RedisAddr: "127.0.0.1:2", MySQLDSN: "root:@tcp(127.0.0.1:3)/x",
		KafkaBrokers: []string{"127.0.0.1:4"}, KeyPrefix: "p:"}
	cfg := Config{EtcDir: "../../etc"}
	cfg.defaults()
	if err := sys.buildConfigs(cfg, "127.0.0.1", 5, 6); err != nil {
		t.Fatal(err)
	}
	c := sys.Configs
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"inventory listen", c.Inventory.ListenOn, sys.RPCAddr},
		{"inventory redis", c.Inventory.StockRedis.Host, sys.RedisAddr},
		{"inventory prefix", c.Inventory.KeyPrefix, "p:"},
		{"inventory relay", c.Inventory.Relay.Brokers[0], "127.0.0.1:4"},
		{"inventory etcd", len(c.Inventory.Etcd.Hosts), 0},
		{"inventory mode", c.Inventory.Mode, "dev"},
		{"inventory devserver", c.Inventory.DevServer.Enabled, false},
		{"writer brokers", c.Writer.Consumer.Brokers[0], "127.0.0.1:4"},
		{"writer mysql", c.Writer.Mysql.DataSource, sys.MySQLDSN},
		{"writer outbox redis", c.Writer.Outbox.Redis.Host, sys.RedisAddr},
		{"writer outbox prefix", c.Writer.Outbox.KeyPrefix, "p:"},
		{"writer jobs rpc", c.Writer.Inventory.Endpoints[0], sys.RPCAddr},
		{"gateway port", c.Gateway.Port, 5},
		{"gateway metrics", c.Gateway.DevServer.Port, 6},
		{"gateway rpc", c.Gateway.Inventory.Endpoints[0], sys.RPCAddr},
		{"gateway log level", c.Gateway.Log.Level, "error"},
		{"gateway log mode", c.Gateway.Log.Mode, "console"},
		// Kept from etc/: what the launcher does not set, and go-zero's defaults.
		{"inventory yaml kept", c.Inventory.Middlewares.StatConf.SlowThreshold.String(), "500ms"},
		{"writer default kept", c.Writer.Consumer.Offset, "first"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// LogDir takes every service's log to files there.
func TestBuildConfigsLogDir(t *testing.T) {
	sys := &System{RPCAddr: "127.0.0.1:1", RedisAddr: "127.0.0.1:2", MySQLDSN: "root:@tcp(127.0.0.1:3)/x",
		KafkaBrokers: []string{"127.0.0.1:4"}}
	cfg := Config{EtcDir: "../../etc", LogDir: "/tmp/logs"}
	cfg.defaults()
	if err := sys.buildConfigs(cfg, "127.0.0.1", 5, 6); err != nil {
		t.Fatal(err)
	}
	for name, l := range map[string]struct{ Mode, Path string }{
		"inventory": {sys.Configs.Inventory.Log.Mode, sys.Configs.Inventory.Log.Path},
		"writer":    {sys.Configs.Writer.Log.Mode, sys.Configs.Writer.Log.Path},
		"gateway":   {sys.Configs.Gateway.Log.Mode, sys.Configs.Gateway.Log.Path},
	} {
		if l.Mode != "file" || l.Path != "/tmp/logs" {
			t.Errorf("%s log = %s %s, want file /tmp/logs", name, l.Mode, l.Path)
		}
	}
}

// make run needs no setup: the shipped gateway config holds no secret, and the launcher
// makes fresh ones each run that the gateway accepts.
func TestFreshSecretsEachRun(t *testing.T) {
	var a, b System
	for _, s := range []*System{&a, &b} {
		cfg := Config{EtcDir: "../../etc"}
		cfg.defaults()
		if err := s.buildConfigs(cfg, "127.0.0.1", 1, 2); err != nil {
			t.Fatal(err)
		}
		if err := s.Configs.Gateway.Validate(); err != nil {
			t.Fatalf("the launcher's secrets are refused: %v", err)
		}
	}
	if a.Configs.Gateway.BuyerAuth.AccessSecret == b.Configs.Gateway.BuyerAuth.AccessSecret ||
		a.Configs.Gateway.MerchantAuth.AccessSecret == b.Configs.Gateway.MerchantAuth.AccessSecret ||
		a.Configs.Gateway.PaymentAuth.Secret == "" ||
		a.Configs.Gateway.PaymentAuth.Secret == b.Configs.Gateway.PaymentAuth.Secret {
		t.Fatal("two runs share a secret")
	}
}
