// Package standalone runs the whole system in one process on one machine: the inventory
// service (zRPC, with its relay to Kafka), the order writer (Kafka -> MySQL) with its jobs
// (expiry, reconciliation, warm-up) and the HTTP gateway, wired over their real protocols.
// For each dependency a configured address is used as is; otherwise the launcher starts its
// own: a private redis-server and MariaDB from the installed binaries (devkit/devenv) and
// the in-process Kafka-protocol broker (kfake).
//
// The services are built by their public constructors (rpcserver.New, mqserver.New,
// apiserver.New) from the same YAML files their production mains read (etc/), loaded by
// their own LoadConfig (so go-zero's defaults apply as in production); only addresses,
// mode and logging are then set, as typed fields (configs.go).
package standalone

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/zeromicro/go-zero/core/trace"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/internal/authtoken"
	"github.com/seckill/seckill/mq/mqserver"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// Environment variables naming already-running dependencies.
const (
	EnvRedis = "SECKILL_REDIS"     // host:port
	EnvMySQL = "SECKILL_MYSQL_DSN" // go-sql-driver DSN, e.g. root:@tcp(127.0.0.1:3306)/seckill
	EnvKafka = "SECKILL_KAFKA"     // comma-separated brokers
)

// Config says what to use and what to start.
type Config struct {
	EtcDir string // the services' YAML configs (default "etc")

	// Dependencies: set = use as is; empty = start a private one.
	RedisAddr    string
	MySQLDSN     string
	KafkaBrokers []string

	KafkaDataDir    string // the private broker's log directory ("": in memory)
	KafkaPartitions int    // of the private broker's topics (default 8)

	// APIAddr is where the gateway listens (default 127.0.0.1:8888; when that port is
	// taken, a free one is used and reported).
	APIAddr  string
	Mode     string // go-zero mode of every service (default dev: no load shedding)
	LogLevel string // go-zero log level (default error)
	// LogDir, when set, takes go-zero's log lines to files there (its file mode: error.log,
	// slow.log, ...) instead of the console: make bench, whose degrade measurement answers
	// tens of thousands of 503s, each logged with its request.
	LogDir    string
	KeyPrefix string // Redis key prefix ("" unless a shared Redis needs one, see Start)
	// Trace, when set, turns go-zero's Telemetry on (off in etc/) and sends every span
	// there (see Telemetry); TraceHeaders go with each OTLP export.
	Trace        string
	TraceHeaders map[string]string

	Install bool      // apt-get install a missing redis-server / mariadb-server when possible
	Log     io.Writer // start-up progress (default: discarded)

	// Configure, when set, adjusts the services' configurations after they are built
	// (tests: shorter job intervals).
	Configure func(*Configs)
}

// FromEnv fills the dependency addresses from SECKILL_REDIS, SECKILL_MYSQL_DSN and
// SECKILL_KAFKA where they are unset.
func (c *Config) FromEnv() {
	if c.RedisAddr == "" {
		c.RedisAddr = os.Getenv(EnvRedis)
	}
	if c.MySQLDSN == "" {
		c.MySQLDSN = os.Getenv(EnvMySQL)
	}
	if len(c.KafkaBrokers) == 0 {
		if v := os.Getenv(EnvKafka); v != "" {
			for _, b := range strings.Split(v, ",") {
				if b = strings.TrimSpace(b); b != "" {
					c.KafkaBrokers = append(c.KafkaBrokers, b)
				}
			}
		}
	}
}

func (c *Config) defaults() {
	if c.EtcDir == "" {
		c.EtcDir = "etc"
	}
	if c.KafkaPartitions == 0 {
		c.KafkaPartitions = 8
	}
	if c.APIAddr == "" {
		c.APIAddr = "127.0.0.1:8888"
	}
	if c.Mode == "" {
		c.Mode = "dev"
	}
	if c.LogLevel == "" {
		c.LogLevel = "error"
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
}

// System is a running standalone deployment.
type System struct {
	APIURL     string // the gateway
	MetricsURL string // Prometheus metrics (go-zero DevServer)
	RPCAddr    string // the inventory service

	RedisAddr    string
	MySQLDSN     string
	KafkaBrokers []string
	KeyPrefix    string
	Private      []string // the dependencies the launcher started itself
	Configs      Configs  // what each service runs with

	BuyerSecret, MerchantSecret string
	PaymentSecret               string // the payment provider's (signs POST /v1/payments/notify)
	BuyerToken, MerchantToken   string // demo tokens: buyer uid 1, merchant mid 1, valid 24 h

	stops []stopper // in start order; Close runs them backwards
}

type stopper struct {
	name string
	stop func()
}

func (s *System) onClose(name string, stop func()) { s.stops = append(s.stops, stopper{name, stop}) }

// Close stops everything Start started, the services before their dependencies.
func (s *System) Close() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i].stop()
	}
	s.stops = nil
}

// Start brings the system up. On error, whatever was started is stopped again.
func Start(ctx context.Context, cfg Config) (_ *System, err error) {
	cfg.defaults()
	// Not the named result: every error return sets that to nil before this runs.
	sys := &System{}
	defer func() {
		if err != nil {
			sys.Close()
		}
	}()
	logf := func(format string, args ...any) { fmt.Fprintf(cfg.Log, format+"\n", args...) }

	if err := startDependencies(ctx, &cfg, sys, logf); err != nil {
		return nil, err
	}

	rpcPort, err := devenv.FreePort()
	if err != nil {
		return nil, err
	}
	sys.RPCAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(rpcPort))
	apiAddr, err := gatewayAddr(cfg.APIAddr, logf)
	if err != nil {
		return nil, err
	}
	apiHost, apiPort, _ := net.SplitHostPort(apiAddr)
	metricsPort, err := devenv.FreePort()
	if err != nil {
		return nil, err
	}
	sys.APIURL = "http://" + apiAddr
	sys.MetricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)

	if err := sys.buildConfigs(cfg, apiHost, mustAtoi(apiPort), metricsPort); err != nil {
		return nil, err
	}
	if cfg.Trace != "" {
		sys.onClose("traces", trace.StopAgent) // after the services: flushes their last spans
	}
	if cfg.Configure != nil {
		cfg.Configure(&sys.Configs)
	}

	if err := startInventory(ctx, sys); err != nil {
		return nil, err
	}
	logf("inventory service (zRPC) on %s, relay to Kafka %v", sys.RPCAddr, sys.KafkaBrokers)
	if err := startWriter(sys); err != nil {
		return nil, err
	}
	logf("order writer consuming Kafka %v into MySQL; expiry, reconciliation and warm-up jobs", sys.KafkaBrokers)
	if err := startGateway(ctx, sys); err != nil {
		return nil, err
	}
	logf("gateway on %s", sys.APIURL)
	if sys.BuyerToken, err = authtoken.Buyer(sys.BuyerSecret, 1, 24*time.Hour); err != nil {
		return nil, err
	}
	if sys.MerchantToken, err = authtoken.Merchant(sys.MerchantSecret, 1, 24*time.Hour); err != nil {
		return nil, err
	}
	return sys, nil
}

// startDependencies uses or starts Redis, MariaDB and Kafka.
func startDependencies(ctx context.Context, cfg *Config, sys *System, logf func(string, ...any)) error {
	ensure := func(pkg devenv.Package) error {
		if !cfg.Install {
			return devenv.Check(pkg)
		}
		_, err := devenv.EnsureInstalled(ctx, pkg, cfg.Log)
		return err
	}

	if sys.RedisAddr = cfg.RedisAddr; sys.RedisAddr == "" {
		if err := ensure(devenv.RedisPackage); err != nil {
			return err
		}
		r, err := devenv.StartRedis(ctx)
		if err != nil {
			return err
		}
		sys.onClose("redis", func() { _ = r.Close() })
		sys.RedisAddr = r.Addr
		sys.Private = append(sys.Private, "redis")
		logf("started a private redis-server on %s (data in %s)", r.Addr, r.Dir)
	} else {
		logf("using Redis at %s", sys.RedisAddr)
	}

	if cfg.MySQLDSN == "" {
		if err := ensure(devenv.MariaDBPackage); err != nil {
			return err
		}
		m, err := devenv.StartMariaDB(ctx)
		if err != nil {
			return err
		}
		sys.onClose("mariadb", func() { _ = m.Close() })
		sys.MySQLDSN = m.DSN
		sys.Private = append(sys.Private, "mariadb")
		logf("started a private MariaDB on %s (data in %s), migrations applied", m.Addr, m.Dir)
	} else {
		dsn, name, err := serviceDSN(cfg.MySQLDSN)
		if err != nil {
			return err
		}
		if err := devenv.CreateDatabase(ctx, dsn, name); err != nil {
			return fmt.Errorf("MySQL at %s: %w", cfg.MySQLDSN, err)
		}
		sys.MySQLDSN = dsn
		logf("using MySQL database %s (pending migrations applied)", name)
	}

	if sys.KafkaBrokers = cfg.KafkaBrokers; len(sys.KafkaBrokers) == 0 {
		k, err := devenv.StartKafka("127.0.0.1:0", cfg.KafkaDataDir, cfg.KafkaPartitions)
		if err != nil {
			return err
		}
		sys.onClose("kafka", func() { _ = k.Close() })
		sys.KafkaBrokers = k.Addrs
		sys.Private = append(sys.Private, "kafka")
		logf("started the in-process Kafka broker (kfake) on %v", k.Addrs)
	} else {
		logf("using Kafka at %v", sys.KafkaBrokers)
	}

	// A shared Redis may hold keys of an earlier run whose activity ids a fresh private
	// MySQL hands out again: give this run its own key space.
	sys.KeyPrefix = cfg.KeyPrefix
	if sys.KeyPrefix == "" && cfg.RedisAddr != "" && cfg.MySQLDSN == "" {
		var b [4]byte
		_, _ = rand.Read(b[:])
		sys.KeyPrefix = "standalone-" + hex.EncodeToString(b[:]) + ":"
		logf("Redis is shared and MySQL private: using key prefix %q", sys.KeyPrefix)
	}
	return nil
}

// serviceDSN returns dsn with what the services need (parseTime, UTC) and its database
// (default seckill).
func serviceDSN(dsn string) (string, string, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", EnvMySQL, err)
	}
	if cfg.DBName == "" {
		cfg.DBName = devenv.Database
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	return cfg.FormatDSN(), cfg.DBName, nil
}

// gatewayAddr is addr when its port is free (port 0: a free one), else a free port on its
// host.
func gatewayAddr(addr string, logf func(string, ...any)) (string, error) {
	l, err := net.Listen("tcp", addr)
	if err == nil {
		got := l.Addr().String()
		_ = l.Close()
		return got, nil
	}
	host, _, serr := net.SplitHostPort(addr)
	if serr != nil {
		return "", serr
	}
	if l, err = net.Listen("tcp", net.JoinHostPort(host, "0")); err != nil {
		return "", err
	}
	free := l.Addr().String()
	_ = l.Close()
	logf("%s is taken: the gateway listens on %s instead", addr, free)
	return free, nil
}

func startInventory(ctx context.Context, sys *System) error {
	s, err := rpcserver.New(sys.Configs.Inventory)
	if err != nil {
		return fmt.Errorf("inventory service: %w", err)
	}
	go s.Start()
	sys.onClose("inventory", s.Stop)
	return waitTCP(ctx, sys.RPCAddr, 30*time.Second)
}

func startWriter(sys *System) error {
	s, err := mqserver.New(sys.Configs.Writer)
	if err != nil {
		return fmt.Errorf("order writer: %w", err)
	}
	go s.Start()
	sys.onClose("writer", s.Stop)
	return nil
}

func startGateway(ctx context.Context, sys *System) error {
	c := sys.Configs.Gateway
	sys.BuyerSecret, sys.MerchantSecret = c.BuyerAuth.AccessSecret, c.MerchantAuth.AccessSecret
	sys.PaymentSecret = c.PaymentAuth.Secret
	s, err := apiserver.New(c)
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	go s.Start()
	sys.onClose("gateway", s.Stop)
	return waitHealthy(ctx, sys.APIURL, 30*time.Second)
}

func waitTCP(ctx context.Context, addr string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			_ = c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not listening: %w", addr, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func waitHealthy(ctx context.Context, base string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	c := apiclient.New(base, apiclient.Options{Conns: 1, Timeout: limit})
	defer c.Close()
	for {
		_, err := c.Healthz(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not healthy: %w", base+apiclient.HealthzPath, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func mustAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
