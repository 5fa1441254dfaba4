// Command faults runs the fault suite (make faults): the seckill services as separate
// processes over a private Redis, MariaDB and Kafka broker, one fault per row injected
// for real during a burst of buyers, and one table of what each fault cost. It exits
// non-zero when any row fails.
//
// With -cluster it runs the cluster table instead: the deploy/multinode topology (Redis
// Cluster with replicas, etcd, several of each service) on this machine.
//
// With -deploy it is make deploy-test: deploy/'s own files (the multinode YAMLs, the Redis
// ACL users, mysql/grants.sql, etcd/auth.sh, kafka/users.txt and acls.txt, tls/gen-certs.sh,
// prometheus/) through one overlay of addresses, ports and data directories
// (devkit/faults/overlay.go), a sale through every gateway, Prometheus's targets and alerts,
// the fault rows on that topology (-only selects among them), and a table of checks.
//
//	make faults
//	make faults-cluster
//	go run -tags no_k8s ./cmd/faults -short -only kafka,writer
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/seckill/seckill/devkit/faults"
)

func main() {
	var cfg faults.Config
	short := flag.Bool("short", false, "the test's smaller bursts and shorter outages")
	only := flag.String("only", "", "comma-separated: run only the rows whose name contains one of these")
	flag.StringVar(&cfg.EtcDir, "etc", "etc", "directory of the services' YAML configs")
	flag.StringVar(&cfg.Dir, "dir", "",
		"keep binaries, configs and logs here (default: a temporary directory, removed)")
	flag.BoolVar(&cfg.Cluster, "cluster", false, "the cluster table (deploy/multinode/topology.yaml) instead")
	deploy := flag.Bool("deploy", false, "make deploy-test: deploy/'s files as deployed, a sale, Prometheus, checks")
	flag.StringVar(&cfg.Break, "break", "", "with -deploy: break one thing to see its check fail "+
		"(grant, redis-user, mysql-user, target, kafka-acl, trace, trace-writer, apps-hash, etcd-tls, ack, failover, "+
		"partition)")
	noInstall := flag.Bool("no-install", false, "never apt-get install a missing redis-server / mariadb-server")
	flag.Parse()
	cfg.Scale = faults.Full
	if *short {
		cfg.Scale = faults.Short
	}
	if *only != "" {
		cfg.Only = strings.Split(*only, ",")
	}
	cfg.Install = !*noInstall
	cfg.Log = os.Stderr
	if cfg.Dir != "" {
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	if *deploy {
		os.Exit(runDeploy(cfg))
	}
	if code := run(cfg); code != 0 {
		os.Exit(code)
	}
}

// run runs the suite and prints its rows; it returns the exit status (1: a row failed,
// 2: the suite could not run).
func run(cfg faults.Config) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	results, err := faults.Run(ctx, cfg)
	faults.Print(os.Stdout, results)
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		return 2
	}
	if faults.Failed(results) {
		return 1
	}
	return 0
}

// runDeploy runs make deploy-test and prints its checks; it returns the exit status (1: a
// check failed, 2: it could not run).
func runDeploy(cfg faults.Config) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	checks, err := faults.RunDeploy(ctx, cfg)
	faults.PrintChecks(os.Stdout, checks)
	fmt.Printf("\ndeploy-test took %s\n", time.Since(start).Round(time.Second))
	if err != nil {
		fmt.Fprintln(os.Stderr, "deploy-test:", err)
		return 2
	}
	if faults.ChecksFailed(checks) {
		return 1
	}
	return 0
}
