package faults

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/go-sql-driver/mysql"
	"github.com/zeromicro/go-zero/core/service"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/mq/mqserver"
	"github.com/seckill/seckill/rpc/rpcserver"
	schema "github.com/seckill/seckill/sql"
)

// Deployment is what the deploy test's system (make deploy-test) adds to the cluster
// table's: deploy/'s users on Redis, MariaDB, etcd and the broker, and every instance's
// metrics for Prometheus, all through the overlay of overlay.go.
type Deployment struct {
	Dir     string            // deploy/
	Suffix  string            // of the database and the MySQL users
	DB      string            // the database (seckill_<Suffix>)
	Break   string            // Options.Break
	Targets map[string]string // instance (rpc-1, the host name deploy/ gives it) -> its metrics address

	env map[string][]string // rpc, api, mq -> its processes' whole environment (deployenv.go)

	etcdTLS    *tls.Config // the services' client certificate and the CA (deployetcd.go)
	etcdctlEnv []string    // etcd-auth's ETCDCTL_CACERT, _CERT, _KEY, overlaid

	traces     *traceReceiver    // where every service's Telemetry.Endpoint points
	traceNames map[string]string // api, rpc, mq -> its Telemetry.Name (the spans' service.name)
	sampler    string            // the services' Telemetry.Sampler, as deploy/ sets them
	// change is Options.Configure, applied after the overlay.
	change func(*rpcserver.Config, *mqserver.Config, *apiserver.Config)
}

// prepare sets deploy/'s secrets, reads each service's environment from the compose file,
// gives the Redis Cluster the compose file's ACL users and starts the trace receiver.
func (d *Deployment) prepare(spec *devenv.ClusterSpec, host string) error {
	err := setDeploySecrets()
	if err != nil {
		return err
	}
	compose := filepath.Join(d.Dir, "docker-compose.yml")
	if d.env, err = serviceEnv(compose); err != nil {
		return err
	}
	args, err := redisACLArgs(compose)
	if err != nil {
		return err
	}
	spec.Args, spec.AdminUser, spec.AdminPass = args, "admin", os.Getenv("SECKILL_REDIS_ADMIN_PASSWORD")
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	d.Suffix = hex.EncodeToString(b[:])
	d.DB = "seckill_" + d.Suffix
	// The trace receiver listens before any port is handed out (freePorts closes what it
	// found): started later, it took an instance's metrics port once, and that target was down.
	d.traces, err = startTraceReceiver(host)
	return err
}

// servers gives MariaDB deploy/mysql's users and grants and etcd deploy/etcd's; the
// suite's own reads of MySQL (root) go to the deploy database.
func (d *Deployment) servers(ctx context.Context, s *System, log io.Writer) error {
	if err := deployMySQL(ctx, s.MariaDB.DSN, d.Dir, d.DB, d.Suffix); err != nil {
		return err
	}
	c, err := mysql.ParseDSN(s.MariaDB.DSN)
	if err != nil {
		return err
	}
	c.DBName = d.DB
	s.MariaDB.DSN = c.FormatDSN()
	if d.Break == "grant" {
		if err := breakGrant(ctx, s.MariaDB.DSN, "seckill_mq_"+d.Suffix); err != nil {
			return err
		}
		fmt.Fprintln(log, "BREAK: INSERT on seckill_order revoked from the writer's user")
	}
	fmt.Fprintf(log, "MariaDB: database %s, users seckill_{migrate,rpc,mq}_%s (deploy/mysql/migrator.sql, "+
		"migrations, grants.sql)\n", d.DB, d.Suffix)
	if err := etcdAuth(ctx, d.Dir, s.Etcd.Addr, d.etcdctlEnv); err != nil {
		return err
	}
	fmt.Fprintln(log, "etcd: TLS (x-etcd's certificates from tls/gen-certs.sh), auth on (deploy/etcd/auth.sh: users "+
		"root, rpc, client)")
	return nil
}

// configure points deploy/'s configs at MariaDB as its users and their traces at this
// run's OTLP receiver (the address only: Batcher and Sampler as deploy/ sets them); every
// credential stays as deploy/ names it (from the environment).
func (d *Deployment) configure(s *System, inv *rpcserver.Config, w *mqserver.Config, g *apiserver.Config) error {
	overlayEtcd(filepath.Join(s.Dir, "tls"), &inv.Etcd, &w.Inventory.Etcd, &g.Inventory.Etcd)
	for _, dsn := range []*string{&inv.Mysql.DataSource, &w.Mysql.DataSource} {
		v, err := overlayDSN(*dsn, s.shared(s.MariaDB.Addr), d.DB, d.Suffix)
		if err != nil {
			return err
		}
		*dsn = v
	}
	r := d.traces // started by prepare
	d.traceNames = map[string]string{"api": g.Telemetry.Name, "rpc": inv.Telemetry.Name, "mq": w.Telemetry.Name}
	d.sampler = fmt.Sprintf("api %g, rpc %g, mq %g", g.Telemetry.Sampler, inv.Telemetry.Sampler, w.Telemetry.Sampler)
	for _, sc := range []*service.ServiceConf{&inv.ServiceConf, &w.ServiceConf, &g.ServiceConf} {
		if sc.Telemetry.Endpoint != "" { // jaeger:4317 -> the receiver
			sc.Telemetry.Endpoint = r.addr
		}
	}
	switch d.Break {
	case "redis-user":
		g.Redis.User, g.Redis.Pass = inv.StockRedis.User, inv.StockRedis.Pass
	case "mysql-user":
		w.Mysql.DataSource = inv.Mysql.DataSource
	case "trace":
		g.Telemetry.Endpoint = "" // the gateway neither makes nor exports spans (internal/telemetry)
	case "trace-writer":
		w.Telemetry.Endpoint = "" // the writers' spans (the Kafka hop's consumer) are not exported
	case "apps-hash":
		inv.LegacyAppsHash = true // the app tokens written to Redis, in clear
	case breakAck:
		inv.Relay.Acknowledge = "redis" // changes answered before their event is in Kafka
	}
	if d.change != nil {
		d.change(inv, w, g)
	}
	s.BuyerSecret, s.MerchantSecret = os.Getenv("SECKILL_BUYER_SECRET"), os.Getenv("SECKILL_MERCHANT_SECRET")
	return nil
}

// metrics puts instance name's DevServer (metrics, /healthz) on port of its host's address
// (ip) and records it for Prometheus's target name:<deploy's port>.
func (d *Deployment) metrics(sc *service.ServiceConf, name, ip string, port int) {
	sc.DevServer.Host, sc.DevServer.Port = ip, port
	if d.Targets == nil {
		d.Targets = map[string]string{}
	}
	d.Targets[name] = net.JoinHostPort(ip, strconv.Itoa(port))
}

// breakGrant revokes user's INSERT on seckill_order (Options.Break "grant").
func breakGrant(ctx context.Context, rootDSN, user string) error {
	db, err := sql.Open("mysql", rootDSN)
	if err != nil {
		return err
	}
	defer db.Close()
	return schema.RevokeInsert(ctx, db, "seckill_order", user)
}
