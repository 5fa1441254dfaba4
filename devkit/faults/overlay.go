package faults

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/go-sql-driver/mysql"
	"gopkg.in/yaml.v3"

	schema "github.com/seckill/seckill/sql"
)

// The deploy test's overlay (make deploy-test, docs/OPERATIONS.md "Run as deployed"): the
// one place where what deploy/ ships is changed before it runs here. It substitutes
//   - addresses and ports: every host name of deploy/ (redis-N, etcd-N, kafka-N,
//     mysql-primary) becomes a private server's address (a bridge's, with Options.NetNS:
//     deployhosts.go; else loopback); each service instance listens (zRPC, HTTP, DevServer
//     metrics) on a free port of its host's address instead of its container's
//     0.0.0.0:port; prometheus.yml's targets become those addresses; gen-certs.sh's
//     ETCD_SANS names etcd's address here;
//   - data directories: the TLS script's output (deploy/'s /etc/etcd/tls and /etc/seckill/tls:
//     deployetcd.go), Redis, MariaDB, etcd and the broker's data in the run's directory;
//     the database `seckill` becomes seckill_<suffix> and each MySQL user seckill_<name>
//     becomes seckill_<name>_<suffix> (as devkit/opstest does);
//   - the trace receiver's address (jaeger:4317) becomes the run's OTLP/gRPC receiver
//     (deploytrace.go); Batcher and Sampler stay as deploy/ sets them.
// Everything else runs as deploy/ has it: the Redis ACL rules of the compose file's
// x-redis command, mysql/migrator.sql and grants.sql, etcd/auth.sh, kafka/users.txt and
// acls.txt, tls/gen-certs.sh, the multinode YAMLs' modes, logs, limits and credentials
// (the secrets themselves are fresh, in the environment, as compose passes them, each
// process given only its service's: deployenv.go).

// deploySecrets are the variables deploy/ reads from the environment (deploy/README.md's
// list), each set to a fresh value where unset.
var deploySecrets = []string{"BUYER_SECRET", "MERCHANT_SECRET", "ORDER_KEY", "EVENT_KEY", "RPC_API_TOKEN",
	"RPC_MQ_TOKEN", "RPC_OPS_TOKEN", "MYSQL_MIGRATE_PASSWORD", "MYSQL_RPC_PASSWORD", "MYSQL_MQ_PASSWORD",
	"REDIS_ADMIN_PASSWORD", "REDIS_RPC_PASSWORD", "REDIS_API_PASSWORD", "REDIS_MQ_PASSWORD",
	"KAFKA_ADMIN_PASSWORD", "KAFKA_RPC_PASSWORD", "KAFKA_MQ_PASSWORD", "ETCD_ROOT_PASSWORD",
	"ETCD_RPC_PASSWORD", "ETCD_CLIENT_PASSWORD", "PAYMENT_SECRET",
	// the exporters' users (not started here: their jobs are left out of prometheus.yml, deployprom.go)
	"MYSQL_EXPORTER_PASSWORD", "REDIS_EXPORTER_PASSWORD", "KAFKA_EXPORTER_PASSWORD"}

// setDeploySecrets sets every SECKILL_<name> of deploySecrets not already set.
func setDeploySecrets() error {
	for _, k := range deploySecrets {
		k = "SECKILL_" + k
		if os.Getenv(k) != "" {
			continue
		}
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		if err := os.Setenv(k, hex.EncodeToString(b[:])); err != nil {
			return err
		}
	}
	return nil
}

// redisACLArgs are the redis-server arguments after the config file in the compose file's
// x-redis command (the ACL users and the replicas' login), the ${VAR:?} in them expanded
// from the environment as compose does.
func redisACLArgs(compose string) ([]string, error) {
	b, err := os.ReadFile(compose)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Redis struct {
			Command []string `yaml:"command"`
		} `yaml:"x-redis"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", compose, err)
	}
	cmd := doc.Redis.Command
	if len(cmd) < 3 || cmd[0] != "redis-server" {
		return nil, fmt.Errorf("%s: x-redis command %q: want redis-server <conf> <args>", compose, cmd)
	}
	var missing []string
	out := make([]string, 0, len(cmd)-2)
	for _, a := range cmd[2:] {
		out = append(out, expandCompose(a, &missing))
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: x-redis needs %s", compose, strings.Join(missing, ", "))
	}
	return out, nil
}

// composeVar is a variable in a compose file's value: ${NAME} or ${NAME:?} (required).
var composeVar = regexp.MustCompile(`\$\{(\w+)(:\?)?\}`)

// expandCompose is value with each ${NAME} expanded from the environment, as compose does;
// the names unset are appended to missing.
func expandCompose(value string, missing *[]string) string {
	return composeVar.ReplaceAllStringFunc(value, func(m string) string {
		name := composeVar.FindStringSubmatch(m)[1]
		if os.Getenv(name) == "" {
			*missing = append(*missing, name)
		}
		return os.Getenv(name)
	})
}

// overlaySQL renames the schema `seckill` to db and each user seckill_<name> to
// seckill_<name>_<suffix> (devkit/opstest's overlay).
func overlaySQL(text, db, suffix string) string {
	text = strings.ReplaceAll(text, "`seckill`.", "`"+db+"`.")
	return regexp.MustCompile(`('+)(seckill_\w+)('+@)`).ReplaceAllString(text, "${1}${2}_"+suffix+"${3}")
}

// overlayDSN is a DSN of deploy/ pointed at addr, database db, its user given suffix.
func overlayDSN(dsn, addr, db, suffix string) (string, error) {
	c, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", err
	}
	c.Addr, c.DBName, c.User = addr, db, c.User+"_"+suffix
	return c.FormatDSN(), nil
}

// deployMySQL does what compose's mysql, mysql-migrate and mysql-grants do, on the
// private MariaDB (root at rootDSN): database db, deploy/mysql/migrator.sql as root, the
// migrations as the migration user, deploy/mysql/grants.sql as root, each file through
// overlaySQL and with the passwords as session variables (mysql/grants.sh).
func deployMySQL(ctx context.Context, rootDSN, deploy, db, suffix string) error {
	c, err := mysql.ParseDSN(rootDSN)
	if err != nil {
		return err
	}
	c.DBName, c.MultiStatements = "", true
	root, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		return err
	}
	defer root.Close()
	vars := fmt.Sprintf("SET @migrate = %s, @rpc = %s, @mq = %s, @exporter = %s;\n",
		quote(os.Getenv("SECKILL_MYSQL_MIGRATE_PASSWORD")), quote(os.Getenv("SECKILL_MYSQL_RPC_PASSWORD")),
		quote(os.Getenv("SECKILL_MYSQL_MQ_PASSWORD")), quote(os.Getenv("SECKILL_MYSQL_EXPORTER_PASSWORD")))
	run := func(file string) error {
		b, err := os.ReadFile(filepath.Join(deploy, "mysql", file))
		if err != nil {
			return err
		}
		if _, err := root.ExecContext(ctx, vars+overlaySQL(string(b), db, suffix)); err != nil {
			return fmt.Errorf("deploy/mysql/%s: %w", file, err)
		}
		return nil
	}
	if err := schema.CreateDatabase(ctx, root, db); err != nil {
		return err
	}
	if err := run("migrator.sql"); err != nil {
		return err
	}
	c.DBName, c.MultiStatements = db, false
	c.User, c.Passwd = "seckill_migrate_"+suffix, os.Getenv("SECKILL_MYSQL_MIGRATE_PASSWORD")
	mig, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		return err
	}
	defer mig.Close()
	if _, err := schema.Migrate(ctx, mig); err != nil {
		return fmt.Errorf("migrate up as %s: %w", c.User, err)
	}
	return run("grants.sql")
}

// quote is s as a SQL string literal (hex secrets: no quote inside).
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// etcdAuth runs deploy/etcd/auth.sh against the etcd at addr over TLS, as compose's
// etcd-auth does (tlsEnv: its ETCDCTL_CACERT, _CERT, _KEY, overlaid: deployetcd.go).
func etcdAuth(ctx context.Context, deploy, addr string, tlsEnv []string) error {
	cmd := exec.CommandContext(ctx, "sh", filepath.Join(deploy, "etcd", "auth.sh"))
	cmd.Env = append(append(os.Environ(), tlsEnv...), "ETCDCTL_ENDPOINTS=https://"+addr,
		"ROOT="+os.Getenv("SECKILL_ETCD_ROOT_PASSWORD"),
		"RPC="+os.Getenv("SECKILL_ETCD_RPC_PASSWORD"), "CLIENT="+os.Getenv("SECKILL_ETCD_CLIENT_PASSWORD"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("deploy/etcd/auth.sh: %w\n%s", err, out)
	}
	return nil
}
