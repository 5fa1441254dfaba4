// Command faults runs the fault suite (make faults): the seckill services as separate
// processes over a private Redis, MariaDB and Kafka broker, one fault per row injected
// for real during a burst of buyers, and one table of what each fault cost. It exits
// non-zero when any row fails.
//
// With -cluster it runs the cluster table instead: the deploy/multinode topology (Redis
// Cluster with replicas, etcd, several of each service) on this machine.
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
