package faults

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/zeromicro/go-zero/core/discov"
	"github.com/zeromicro/go-zero/core/service"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/standalone"
	"github.com/seckill/seckill/mq/mqserver"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// The mains the suite builds and runs, by package.
var mains = map[string]string{
	"rpc":   "./rpc",
	"mq":    "./mq",
	"api":   "./api",
	"kafka": "./cmd/kafka",
}

// build compiles every main once into dir (go build -tags no_k8s), from the module root.
func build(ctx context.Context, root, dir string, log io.Writer) error {
	for name, pkg := range mains {
		fmt.Fprintf(log, "building %s\n", pkg)
		cmd := exec.CommandContext(ctx, "go", "build", "-tags", "no_k8s", "-o", filepath.Join(dir, name), pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
		}
	}
	return nil
}

// System is the seckill services as separate processes over private servers: a
// redis-server and a MariaDB started by devenv (never the shared 6379/3306), a kfake broker
// in its own process with a data directory, and a TCP proxy between the services and
// MariaDB (the MySQL cut). The suite's own reads of MySQL go around the proxy.
type System struct {
	Dir    string // binaries, configs, logs, the broker's data
	APIURL string

	Redis     *devenv.Proc
	MariaDB   *devenv.MariaDB
	MySQLCut  *devenv.Proxy // rpc and mq reach MariaDB through it
	KafkaAddr string

	Inventory, Writer, Gateway, Kafka *child

	BuyerSecret, MerchantSecret string

	// The cluster table's system (StartCluster) runs several of each service: Inventory,
	// Writer and Gateway are the first of each, APIURL the first gateway's. Empty in the
	// single-node system.
	Inventories, Writers, Gateways []*child
	APIURLs                        []string
	Cluster                        *devenv.RedisCluster
	Etcd                           *devenv.Proc
	Topology                       Topology
	// Deploy is the deploy test's system (Options.Deploy): deploy/'s users and metrics.
	Deploy *Deployment
	// Hot is the activity the current row's burst buys.
	Hot int64

	rpcAddr string
	invCfg  rpcserver.Config // what rpc runs with, unless a row says otherwise
	hosts   *devenv.Hosts    // Options.NetNS: a network namespace per instance (deployhosts.go)
	closers []func()
}

// Options configure Start.
type Options struct {
	Root    string    // the module root (default: the working directory)
	EtcDir  string    // default Root/etc
	Dir     string    // work directory (default: a fresh temporary one, removed by Close)
	Log     io.Writer // progress
	Install bool      // apt-get a missing redis-server / mariadb-server
	// Deploy (StartCluster only): the deploy test's system, deploy/'s files through the
	// overlay of overlay.go (users on every hop, metrics) rather than the cluster table's.
	Deploy bool
	// Break (the deploy test) breaks one thing on purpose, to show that its check fails:
	// "grant" (the writer's INSERT on seckill_order revoked), "redis-user" (the gateway
	// logs in to Redis as rpc), "mysql-user" (the writer connects as seckill_rpc),
	// "target" (one writer killed before Prometheus is asked, once its SeckillTargetDown
	// fires), "kafka-acl" (mq also allowed to write the events topic), "trace" (the
	// gateway exports no spans), "apps-hash" (rpc's LegacyAppsHash on), and for the fault rows
	// (deployfaultrows.go) "ack" (rpc's Relay.Acknowledge redis), "failover" (the gateway
	// row's buyers without a load balancer), "partition" (no link is taken down).
	Break string
	// Configure (the deploy test's system only) changes the configs after the overlay,
	// before they are written: make bench's production profile (devkit/benchrun), which
	// lists every change it makes.
	Configure func(inv *rpcserver.Config, w *mqserver.Config, g *apiserver.Config)
	// NetNS (the deploy test's system only; make deploy-test sets it): each instance on a
	// host of its own, a network namespace with its own address (deployhosts.go); needs
	// root. Without it every process shares this machine's loopback.
	NetNS bool
	// Topology (StartCluster only), when set, is run instead of the counts of
	// deploy/multinode/topology.yaml, from the same files: make bench's one-instance
	// production profile (devkit/benchrun).
	Topology *Topology
}

// Start builds the mains and brings the system up.
func Start(ctx context.Context, o Options) (s *System, err error) {
	sys, o, err := newSystem(ctx, o)
	if err != nil {
		return nil, err
	}
	s = sys
	defer sys.closeOnError(&err)
	if err := ensureTools(ctx, o, devenv.RedisPackage, devenv.MariaDBPackage); err != nil {
		return nil, err
	}
	if s.Redis, err = devenv.StartRedis(ctx); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { _ = sys.Redis.Close() })
	fmt.Fprintf(o.Log, "private redis-server on %s\n", s.Redis.Addr)
	if s.MariaDB, err = devenv.StartMariaDB(ctx); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { _ = sys.MariaDB.Close() })
	if s.MySQLCut, err = devenv.StartProxy(s.MariaDB.Addr); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { _ = sys.MySQLCut.Close() })
	fmt.Fprintf(o.Log, "private MariaDB on %s (services through the proxy on %s)\n", s.MariaDB.Addr, s.MySQLCut.Addr)

	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	s.KafkaAddr, s.rpcAddr = devenv.Loopback(ports[0]), devenv.Loopback(ports[1])
	s.APIURL = "http://" + devenv.Loopback(ports[2])
	if err := s.startKafka(ctx, 8); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "kfake broker (its own process) on %s\n", s.KafkaAddr)

	if err := s.writeConfigs(o.EtcDir, ports[2]); err != nil {
		return nil, err
	}
	s.Inventory = &child{name: "rpc", bin: filepath.Join(s.Dir, "rpc"), log: filepath.Join(s.Dir, "rpc.log"),
		args:  []string{"-f", filepath.Join(s.Dir, "inventory.json")},
		ready: func(ctx context.Context) error { return dialOK(ctx, s.rpcAddr) }}
	s.Writer = &child{name: "mq", bin: filepath.Join(s.Dir, "mq"), log: filepath.Join(s.Dir, "mq.log"),
		args: []string{"-f", filepath.Join(s.Dir, "mq.json")}}
	s.Gateway = &child{name: "api", bin: filepath.Join(s.Dir, "api"), log: filepath.Join(s.Dir, "api.log"),
		args:  []string{"-f", filepath.Join(s.Dir, "seckill-api.json")},
		ready: func(ctx context.Context) error { return healthy(ctx, s.APIURL) }}
	for _, c := range []*child{s.Inventory, s.Writer, s.Gateway} {
		s.closers = append(s.closers, c.stop)
		if err := c.start(ctx); err != nil {
			return nil, err
		}
		fmt.Fprintf(o.Log, "%s started (log %s)\n", c.name, c.log)
	}
	return s, nil
}

// newSystem fills o's defaults, makes the work directory and builds the mains into it. On
// an error it has cleaned up.
func newSystem(ctx context.Context, o Options) (s *System, _ Options, err error) {
	if o.Root == "" {
		if o.Root, err = os.Getwd(); err != nil {
			return nil, o, err
		}
	}
	if o.EtcDir == "" {
		o.EtcDir = filepath.Join(o.Root, "etc")
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	s = &System{}
	if s.Dir = o.Dir; s.Dir == "" {
		if s.Dir, err = os.MkdirTemp("", "seckill-faults-"); err != nil {
			return nil, o, err
		}
		dir := s.Dir
		s.closers = append(s.closers, func() { _ = os.RemoveAll(dir) })
	}
	if err := build(ctx, o.Root, s.Dir, o.Log); err != nil {
		s.Close()
		return nil, o, err
	}
	return s, o, nil
}

// closeOnError closes s when *err is set (a Start that failed; its named result is nil by
// then, so the closers use the system they were given).
func (s *System) closeOnError(err *error) {
	if *err != nil {
		s.Close()
	}
}

// ensureTools installs (o.Install) or checks the packages the system runs.
func ensureTools(ctx context.Context, o Options, pkgs ...devenv.Package) error {
	for _, pkg := range pkgs {
		if o.Install {
			if _, err := devenv.EnsureInstalled(ctx, pkg, o.Log); err != nil {
				return err
			}
		} else if err := devenv.Check(pkg); err != nil {
			return err
		}
	}
	return nil
}

// startKafka starts the kfake broker process on s.KafkaAddr, its topics seeded with
// partitions partitions.
func (s *System) startKafka(ctx context.Context, partitions int) error {
	s.Kafka = &child{name: "kafka", bin: filepath.Join(s.Dir, "kafka"), log: filepath.Join(s.Dir, "kafka.log"),
		args: []string{"-addr", s.KafkaAddr, "-data-dir", filepath.Join(s.Dir, "kafka-data"),
			"-partitions", strconv.Itoa(partitions)},
		ready: func(ctx context.Context) error { return dialOK(ctx, s.KafkaAddr) }}
	if s.Deploy != nil { // deploy/kafka's SCRAM users and ACLs
		k := filepath.Join(s.Deploy.Dir, "kafka")
		acls, err := s.Deploy.kafkaACLs(filepath.Join(k, "acls.txt"), s.Dir)
		if err != nil {
			return err
		}
		s.Kafka.args = append(s.Kafka.args, "-users", filepath.Join(k, "users.txt"), "-acls", acls)
	}
	s.closers = append(s.closers, s.Kafka.stop)
	return s.Kafka.start(ctx)
}

// writeConfigs loads etc/*.yaml through each service's LoadConfig, points them at this
// system and writes them out as the JSON files the services' -f flags load.
func (s *System) writeConfigs(etcDir string, apiPort int) error {
	mysqlDSN, err := viaProxy(s.MariaDB.DSN, s.MySQLCut.Addr)
	if err != nil {
		return err
	}

	inv, err := rpcserver.LoadConfig(filepath.Join(etcDir, "inventory.yaml"))
	if err != nil {
		return err
	}
	common(&inv.ServiceConf)
	inv.ListenOn, inv.Etcd = s.rpcAddr, discov.EtcdConf{}
	inv.StockRedis.Host, inv.StockRedis.Type = s.Redis.Addr, "node"
	inv.Mysql.DataSource = mysqlDSN
	inv.Relay.Brokers = []string{s.KafkaAddr}

	w, err := mqserver.LoadConfig(filepath.Join(etcDir, "mq.yaml"))
	if err != nil {
		return err
	}
	common(&w.ServiceConf)
	w.Consumer.Brokers, w.DeadLetter.Brokers = []string{s.KafkaAddr}, []string{s.KafkaAddr}
	w.Mysql.DataSource = mysqlDSN
	w.Outbox.Redis, w.Outbox.KeyPrefix = inv.StockRedis, inv.KeyPrefix
	w.Inventory.Endpoints, w.Inventory.Etcd = []string{s.rpcAddr}, discov.EtcdConf{}

	g, err := apiserver.LoadConfig(filepath.Join(etcDir, "seckill-api.yaml"))
	if err != nil {
		return err
	}
	common(&g.ServiceConf)
	g.Host, g.Port = "127.0.0.1", apiPort
	g.Inventory.Endpoints, g.Inventory.Etcd = []string{s.rpcAddr}, discov.EtcdConf{}
	g.Redis.Host, g.Redis.Type = s.Redis.Addr, "node"
	standalone.Secure(&inv, &w, &g)
	s.invCfg = inv
	s.BuyerSecret, s.MerchantSecret = g.BuyerAuth.AccessSecret, g.MerchantAuth.AccessSecret
	if err := writeConfig(filepath.Join(s.Dir, "inventory.json"), inv, rpcserver.LoadConfig); err != nil {
		return err
	}
	if err := writeConfig(filepath.Join(s.Dir, "mq.json"), w, mqserver.LoadConfig); err != nil {
		return err
	}
	return writeConfig(filepath.Join(s.Dir, "seckill-api.json"), g, apiserver.LoadConfig)
}

// common sets what every service of the suite runs with: dev mode (no load shedding: the
// suite counts faults, not the CPU of 2 cores), console logging at error level, and no
// DevServer or Prometheus agent (their fixed ports of etc/ and deploy/ may be in use).
func common(sc *service.ServiceConf) {
	sc.Mode = "dev"
	sc.Log.Mode, sc.Log.Encoding, sc.Log.Level, sc.Log.Stat = "console", "plain", "error", false
	sc.DevServer.Enabled = false
	// deploy/multinode/mq.yaml still names the agent's block
	sc.Prometheus.Host, sc.Prometheus.Port = "", 0 //nolint:staticcheck // SA1019: cleared, not used
}

// Close stops everything Start started, services before their servers.
func (s *System) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// withInventory restarts rpc with its config changed by change (a row's setting, e.g.
// degrade mode) and returns what puts the suite's config back (another restart).
func (s *System) withInventory(ctx context.Context, change func(*rpcserver.Config)) (
	restore func(context.Context) error, err error) {
	c := s.invCfg
	change(&c)
	file := filepath.Join(s.Dir, "inventory-row.json")
	if err := writeConfig(file, c, rpcserver.LoadConfig); err != nil {
		return nil, err
	}
	def := s.Inventory.args
	restart := func(ctx context.Context, args []string) error {
		s.Inventory.stop()
		s.Inventory.args = args
		return s.Inventory.start(ctx)
	}
	if err := restart(ctx, []string{"-f", file}); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error { return restart(ctx, def) }, nil
}

// restartRedis brings the private Redis back on its port and directory after a SHUTDOWN.
func (s *System) restartRedis(ctx context.Context) error {
	r, err := devenv.RestartRedis(ctx, s.Redis)
	if err != nil {
		return err
	}
	s.Redis = r
	return nil
}

// ensureUp restarts whatever is not running (after a row whose fault outlived it) and
// waits for the gateway to be healthy. It returns the names it had to restart.
func (s *System) ensureUp(ctx context.Context) ([]string, error) {
	var restarted []string
	for _, c := range s.children() {
		if !c.alive() {
			restarted = append(restarted, c.name)
			if err := c.start(ctx); err != nil {
				return restarted, err
			}
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		var err error
		for _, u := range s.gatewayURLs() {
			if err = healthy(wctx, u); err != nil {
				break
			}
		}
		if err == nil {
			return restarted, nil
		}
		select {
		case <-wctx.Done():
			return restarted, fmt.Errorf("gateway not healthy: %w", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// children are every service process, the broker first.
func (s *System) children() []*child {
	if s.Inventories == nil {
		return []*child{s.Kafka, s.Inventory, s.Writer, s.Gateway}
	}
	out := []*child{s.Kafka}
	out = append(out, s.Inventories...)
	out = append(out, s.Writers...)
	return append(out, s.Gateways...)
}

// gatewayURLs are the base URLs of every gateway.
func (s *System) gatewayURLs() []string {
	if s.APIURLs == nil {
		return []string{s.APIURL}
	}
	return s.APIURLs
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func dialOK(ctx context.Context, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return c.Close()
}

// healthy: the gateway at base answers GET /healthz 200 within 2 s.
func healthy(ctx context.Context, base string) error {
	c := apiclient.New(base, apiclient.Options{Conns: 1, Timeout: 2 * time.Second})
	defer c.Close()
	_, err := c.Healthz(ctx)
	return err
}
