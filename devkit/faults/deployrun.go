package faults

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/logx"

	schema "github.com/seckill/seckill/sql"
)

// Check is one row of the deploy test's table.
type Check struct {
	Name, Status, Detail string
}

func check(name string, ok bool, format string, args ...any) Check {
	st := Fail
	if ok {
		st = Pass
	}
	return Check{Name: name, Status: st, Detail: fmt.Sprintf(format, args...)}
}

// NotDone is what the deploy test does not start here, printed with its table.
var NotDone = []string{
	"Kafka: no real Kafka can be installed here; the in-process kfake broker runs instead, " +
		"with deploy/kafka/users.txt's SCRAM-SHA-512 users and acls.txt's ACLs enforced",
	"Kubernetes: not done; no manifests are started",
	"hosts: each service instance is a network namespace of this machine with its own address; the shared " +
		"servers (Redis, MariaDB, etcd, the broker, Prometheus, the trace receiver) run in this machine's own " +
		"namespace, reached through two bridges (the service network and the Redis network), not on hosts of their own",
}

// RunDeploy is make deploy-test: deploy/'s files started through the overlay (overlay.go)
// as a multi-node system on this machine, Prometheus on deploy/'s config and rules, a sale
// through every gateway, and the checks. An error: it could not run at all.
func RunDeploy(ctx context.Context, cfg Config) ([]Check, error) {
	log := cfg.Log
	if log == nil {
		log = io.Discard
	}
	logx.SetLevel(logx.ErrorLevel)
	o := cfg.Options
	switch o.Break {
	case "", "grant", "redis-user", "mysql-user", "target", "kafka-acl", "trace", "trace-writer", "apps-hash",
		"etcd-tls", breakAck, "failover", "partition":
	default:
		return nil, fmt.Errorf("-break %q: want grant, redis-user, mysql-user, target, kafka-acl, trace, trace-writer, "+
			"apps-hash, etcd-tls, ack, failover or partition", o.Break)
	}
	o.Deploy, o.NetNS = true, true
	s, err := StartCluster(ctx, o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	prom, err := startPrometheus(ctx, s)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "prometheus on %s (deploy/prometheus/prometheus.yml, its targets replaced; alerts.yml)\n", prom.base)
	var checks []Check
	fmt.Fprintf(log, "sale through %d gateways: %s\n", len(s.APIURLs), strings.Join(s.APIURLs, ", "))
	r := runRow(ctx, s, Row{Name: "sale", Burst: providerPays}, cfg.Scale)
	checks = append(checks, check(fmt.Sprintf("sale through %d gateways", len(s.APIURLs)), r.Status == Pass,
		"acknowledged %d, oversold %d, lost %d, duplicated %d, told no %d, reconcile consistent %v in %s%s",
		r.Acknowledged, r.Oversold, r.Lost, r.Duplicated, r.ToldNo, r.Consistent,
		r.TimeToConsistent.Round(100*time.Millisecond), reasons(r.Reasons)))
	checks = append(checks, s.gatewaysServed(r))
	checks = append(checks, s.usersCheck(ctx)...) // after the sale: every service has connected
	checks = append(checks, envCheck(s.children()[1:], s.Deploy.env))
	checks = append(checks, s.appTokensCheck(ctx))
	checks = append(checks, s.kafkaCheck(ctx))
	checks = append(checks, s.etcdCheck(ctx))
	if s.Deploy.Break == "target" {
		s.Writers[0].kill()
		fmt.Fprintf(log, "BREAK: %s killed; waiting for SeckillTargetDown to fire\n", s.Writers[0].name)
		if err := prom.waitAlert(ctx, "SeckillTargetDown", s.Deploy.Targets[s.Writers[0].name], true); err != nil {
			fmt.Fprintln(log, err)
		}
	}
	checks = append(checks, prom.checks(ctx)...)
	checks = append(checks, s.Deploy.traces.traceCheck(ctx, s.Deploy.traceNames, s.Deploy.sampler, 20*time.Second))
	return append(checks, s.faultRows(ctx, prom, cfg, log)...), nil
}

func reasons(rs []string) string {
	if len(rs) == 0 {
		return ""
	}
	return "; " + strings.Join(rs, "; ")
}

// gatewaysServed: every gateway answered buyers (the burst spreads them over all).
func (s *System) gatewaysServed(r Result) Check {
	return check("buyers spread over every gateway", len(s.APIURLs) >= 2 && r.Acknowledged > 0,
		"%d gateways: %s", len(s.APIURLs), strings.Join(s.APIURLs, ", "))
}

// usersCheck: each service is logged in to Redis and MariaDB as its own deploy/ user (the
// servers' own client lists), and to no server as a user that is not its.
func (s *System) usersCheck(ctx context.Context) []Check {
	seen := map[string]bool{}
	var errs []string
	idle := 0
	for _, n := range s.Cluster.Nodes {
		c := redis.NewClient(&redis.Options{Addr: n.Addr, Username: "admin", DisableIdentity: true,
			Password: adminPass()})
		list, err := c.ClientList(ctx).Result()
		_ = c.Close()
		if err != nil {
			errs = append(errs, n.Addr+": "+err.Error())
			continue
		}
		for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
			f := fields(line)
			switch {
			case f["user"] == "(superuser)" && strings.Contains(f["flags"], "M"):
				continue // a replica's link to its master (masteruser admin)
			case f["user"] == "default" && f["cmd"] == "NULL":
				idle++ // a pool's connection not yet used, so not yet logged in: it may do nothing
				continue
			case f["user"] == "default" || f["user"] == "(superuser)":
				errs = append(errs, fmt.Sprintf("%s: %s flags=%s cmd=%s", n.Addr, f["user"], f["flags"], f["cmd"]))
			}
			seen[f["user"]] = true
		}
	}
	users := keys(seen)
	// mq reads Redis only for an event rejected past PoisonAfter: none in a healthy sale.
	unknown := 0
	for u := range seen {
		if u != "rpc" && u != "api" && u != "mq" && u != "admin" {
			unknown++
		}
	}
	redisOK := seen["rpc"] && seen["api"] && unknown == 0 && len(errs) == 0
	out := []Check{check("Redis: each service as its own ACL user", redisOK,
		"users logged in on the %d nodes: %s (admin: this check); %d pooled connections not yet logged in "+
			"(deploy/docker-compose.yml x-redis)%s", len(s.Cluster.Nodes), strings.Join(users, ", "), idle,
		reasons(firstNList(errs, 3)))}
	return append(out, s.mysqlUsers(ctx))
}

func adminPass() string { return os.Getenv("SECKILL_REDIS_ADMIN_PASSWORD") }

// mysqlUsers: the services' connections to MariaDB are deploy/mysql/grants.sql's users.
func (s *System) mysqlUsers(ctx context.Context) Check {
	db, err := sql.Open("mysql", s.MariaDB.DSN)
	if err != nil {
		return check("MariaDB: each service as its own user", false, "%v", err)
	}
	defer db.Close()
	users, err := schema.SessionUsers(ctx, db, s.Deploy.DB)
	seen := map[string]bool{}
	for _, u := range users {
		seen[u] = true
	}
	sfx := "_" + s.Deploy.Suffix
	ok := seen["seckill_rpc"+sfx] && seen["seckill_mq"+sfx] && err == nil
	delete(seen, "root") // the suite's own reads
	return check("MariaDB: each service as its own user", ok && len(seen) == 2,
		"users on %s: %s (deploy/mysql/grants.sql)%s", s.Deploy.DB, strings.Join(keys(seen), ", "),
		reasons(errText(err)))
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// PrintChecks writes the table, then what was not done.
func PrintChecks(w io.Writer, checks []Check) {
	width := len("check")
	for _, c := range checks {
		width = max(width, len(c.Name))
	}
	fmt.Fprintf(w, "%-*s | result | detail\n%s-|--------|-------\n", width, "check", strings.Repeat("-", width))
	for _, c := range checks {
		fmt.Fprintf(w, "%-*s | %-6s | %s\n", width, c.Name, c.Status, c.Detail)
	}
	fmt.Fprintln(w, "\nnot done here:")
	for _, n := range NotDone {
		fmt.Fprintln(w, "  - "+n)
	}
}

// ChecksFailed reports whether any check failed (or there were none).
func ChecksFailed(checks []Check) bool {
	for _, c := range checks {
		if c.Status != Pass {
			return true
		}
	}
	return len(checks) == 0
}

// fields are a CLIENT LIST line's key=value pairs.
func fields(line string) map[string]string {
	m := map[string]string{}
	for _, f := range strings.Fields(line) {
		k, v, _ := strings.Cut(f, "=")
		m[k] = v
	}
	return m
}
