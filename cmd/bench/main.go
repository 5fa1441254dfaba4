// Command bench is `make bench`: Go benchmarks (stock.Reserve vs raw EVALSHA, the writer's
// group commit vs one transaction per event, the batched writer) and a short loopback load
// run against the standalone system beside bare go-zero baselines (reservations, sold-out
// rejections, reservations beside the bare handler, a sold-out storm, writer / reservation
// rate, and "sale vs bare": a sale of 10,000 units to 1,000,000 buyers at 256 clients
// beside the bare handler at 256, -no-sale leaves it out), Redis time per reservation (INFO
// commandstats, batches of 32 beside batches of 1),
// then degrade mode (the MySQL book beside the Redis path on one inventory instance whose
// Redis is cut, and a sweep of its semaphore), then the capacity at a p99 bound (the
// highest open-loop rate of reservations, and of the bare handler, with p99 <= 50 ms and
// no errors: loadgen's capacity search), printed as ratios from one run
// (devkit/benchrun); -json prints the document alone on stdout (go-zero's log lines go to
// -logs). Beside the HTTP rows, "prod reservations" and "prod sold-out" repeat the same
// sales on deploy/'s own files run as separate processes (the production profile: pro mode,
// Telemetry, TLS zRPC, ACL Redis users, a SASL broker; one api, rpc and mq on a 3-master Redis
// Cluster unless -prod-topology deploy; -prod-pprof DIR writes CPU profiles of the first
// round's sales; -no-prod leaves them out), each ÷ the dev profile's in the same round. Run it
// from the repository root.
//
//	make bench
//	go run -tags no_k8s ./cmd/bench -requests 3000 -duration 5s -json
//	go run -tags no_k8s ./cmd/bench -no-go -no-http   # degrade mode and the capacity row
//	go run -tags no_k8s ./cmd/bench -no-go -no-http -no-redis -no-degrade   # the capacity row only
//	go run -tags no_k8s ./cmd/bench -no-go -no-redis -no-degrade -no-prod -no-capacity   # HTTP rows, sale vs bare
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/seckill/seckill/devkit/benchrun"
	"github.com/seckill/seckill/devkit/standalone"
)

// options are the flags that are not fields of benchrun.Config.
type options struct {
	kafka, sweep, logs       string
	timeout                  time.Duration
	asJSON, quiet, noInstall bool
}

func main() {
	var cfg benchrun.Config
	opt := parseFlags(&cfg)
	if code := configure(&cfg, opt); code != 0 {
		os.Exit(code)
	}
	os.Exit(run(cfg, opt))
}

func parseFlags(cfg *benchrun.Config) options {
	var opt options
	flag.StringVar(&cfg.Dir, "dir", ".", "repository root (go test runs there; etc/ is read from there)")
	flag.StringVar(&cfg.Standalone.EtcDir, "etc", "", "the services' YAML configs (default <dir>/etc)")
	flag.StringVar(&cfg.Standalone.Mode, "mode", "dev", "go-zero mode of every service and baseline: "+
		"dev (or test) = the noshed profile, load shedding off in the whole process; pro sheds above CpuThreshold")
	flag.StringVar(&cfg.Standalone.RedisAddr, "redis", "",
		"Redis host:port (env "+standalone.EnvRedis+"; default: a private redis-server)")
	flag.StringVar(&cfg.Standalone.MySQLDSN, "mysql", "",
		"MySQL DSN (env "+standalone.EnvMySQL+"; default: a private MariaDB)")
	flag.StringVar(&opt.kafka, "kafka", "",
		"comma-separated Kafka brokers (env "+standalone.EnvKafka+"; default: in-process kfake)")
	flag.StringVar(&cfg.Standalone.Trace, "trace", "",
		"turn go-zero's Telemetry on (sampler 1) and send every span there, as make run -trace (default off)")
	flag.IntVar(&cfg.Concurrency, "c", 64, "HTTP clients in flight")
	flag.IntVar(&cfg.Requests, "requests", 10000, "requests per HTTP measurement (count bound)")
	flag.DurationVar(&cfg.MaxDuration, "duration", 15*time.Second, "time bound of each HTTP measurement")
	flag.IntVar(&cfg.StormStock, "storm-stock", 1000, "stock of the sold-out storm's sale")
	flag.IntVar(&cfg.StormBuyers, "storm-buyers", 20000, "buyers of the sold-out storm's sale")
	saleFlags(cfg)
	flag.IntVar(&cfg.Rounds, "rounds", 3,
		"rounds of the Go benchmark pairs and the HTTP rows (each row reports its median round)")
	flag.IntVar(&cfg.StockN, "stock-n", 20000, "-benchtime (x) of Reserve / RawEvalsha")
	flag.IntVar(&cfg.WriterN, "writer-n", 4000, "-benchtime (x) of the writer benchmarks")
	flag.BoolVar(&cfg.SkipGo, "no-go", false, "leave out the Go benchmarks")
	flag.BoolVar(&cfg.SkipHTTP, "no-http", false, "leave out the HTTP measurements")
	flag.BoolVar(&cfg.SkipProd, "no-prod", false,
		"leave out the production profile's rows (deploy/'s files as processes, the dev profile's sales on them)")
	flag.StringVar(&cfg.ProdTopology, "prod-topology", benchrun.ProdOne, "production profile's topology: "+
		benchrun.ProdOne+" (1 api, 1 rpc, 1 mq, Redis Cluster 3 masters without replicas) or "+benchrun.ProdDeploy+
		" (deploy/multinode/topology.yaml's counts)")
	flag.StringVar(&cfg.ProdPprof, "prod-pprof", "", "directory for CPU profiles of the first round's dev and prod "+
		"sales (dev: this process; prod: api, rpc and mq, DevServer pprof turned on and listed)")
	flag.DurationVar(&cfg.ProdPprofFor, "prod-pprof-for", 4*time.Second, "length of each -prod-pprof profile")
	flag.BoolVar(&cfg.SkipRedis, "no-redis", false, "leave out the Redis time per reservation (INFO commandstats)")
	flag.IntVar(&cfg.RedisN, "redis-n", 4096, "Redis time per reservation: reservations per measurement")
	flag.IntVar(&cfg.RedisBatch, "redis-batch", 32,
		"Redis time per reservation: the batch size measured beside batches of 1 (and twice it)")
	flag.StringVar(&cfg.Standalone.KeyPrefix, "key-prefix", "", "Redis key prefix of the system (for a shared -redis)")
	flag.BoolVar(&cfg.SkipDegrade, "no-degrade", false,
		"leave out degrade mode (the MySQL book beside the Redis path, the semaphore sweep)")
	flag.IntVar(&cfg.DegradeClients, "degrade-c", 128, "degrade mode: concurrent buyers of each burst")
	flag.IntVar(&cfg.DegradeRequests, "degrade-requests", 100000,
		"degrade mode: at most this many buyers per burst (count bound)")
	flag.DurationVar(&cfg.DegradeDuration, "degrade-duration", 3*time.Second,
		"degrade mode: length of each burst (the time bound that ends it)")
	flag.StringVar(&opt.sweep, "degrade-sweep", "4,16,64",
		"degrade mode: semaphore sizes (DegradeMode.Concurrency) after the shipped one")
	flag.BoolVar(&cfg.SkipCapacity, "no-capacity", false,
		"leave out the capacity at a p99 bound (open-loop searches of the reservations and the bare handler)")
	flag.DurationVar(&cfg.CapacityP99, "capacity-p99", 50*time.Millisecond,
		"capacity row: the p99 bound of a passing step")
	flag.DurationVar(&cfg.CapacityStep, "capacity-step", time.Second, "capacity row: each step's schedule")
	flag.DurationVar(&cfg.CapacityBudget, "capacity-budget", 80*time.Second,
		"capacity row: both searches together (half each; a step begun goes on past it)")
	flag.StringVar(&cfg.Go, "go", "go", "the go command")
	flag.DurationVar(&opt.timeout, "timeout", 20*time.Minute, "bound on the whole run")
	flag.BoolVar(&opt.asJSON, "json", false, "print the result as JSON instead of the table")
	flag.BoolVar(&opt.quiet, "q", false, "no progress on stderr")
	flag.BoolVar(&opt.noInstall, "no-install", false, "never apt-get install a missing redis-server / mariadb-server")
	flag.StringVar(&opt.logs, "logs", "", "directory for the services' go-zero log files "+
		"(default: a new one in the temp dir, named at the end; - for the console)")
	flag.Parse()
	return opt
}

// saleFlags are the "sale vs bare" row's.
func saleFlags(cfg *benchrun.Config) {
	flag.IntVar(&cfg.SaleBuyers, "sale-buyers", 1_000_000, "sale vs bare: buyers of the sale (one attempt each), "+
		"and the bare handler's requests")
	flag.IntVar(&cfg.SaleStock, "sale-stock", 10_000, "sale vs bare: stock of the sale")
	flag.IntVar(&cfg.SaleConc, "sale-conc", 256, "sale vs bare: clients in flight, of the sale and the bare handler")
	flag.DurationVar(&cfg.SaleMaxDuration, "sale-duration", 10*time.Minute,
		"sale vs bare: time bound of the sale's reserve phase and of the bare handler's run")
	flag.StringVar(&cfg.SalePprof, "sale-pprof", "", "sale vs bare: directory for CPU profiles of this process "+
		"during the first round's bare handler run and sale (sale-bare.pprof, sale.pprof)")
	flag.DurationVar(&cfg.SalePprofFor, "sale-pprof-for", 20*time.Second, "length of each -sale-pprof profile "+
		"(from its run's start)")
	flag.BoolVar(&cfg.SkipSale, "no-sale", false, "leave out the sale vs bare row (a sale of -sale-stock units to "+
		"-sale-buyers buyers beside the bare handler, both at -sale-conc)")
}

// configure completes cfg from the other flags and the environment; it returns the exit
// status of a bad flag (0: none).
func configure(cfg *benchrun.Config, opt options) int {
	switch opt.logs {
	case "-":
	case "":
		dir, err := os.MkdirTemp("", "seckill-bench-logs-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: -logs:", err)
			return 1
		}
		cfg.Standalone.LogDir = dir
	default:
		cfg.Standalone.LogDir = opt.logs
	}
	sizes, err := benchrun.ParseSweep(opt.sweep)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: -degrade-sweep:", err)
		return 2
	}
	cfg.DegradeSweep = append([]int{}, sizes...) // empty, not nil: only the shipped size
	if opt.kafka != "" {
		cfg.Standalone.KafkaBrokers = strings.Split(opt.kafka, ",")
	}
	cfg.Standalone.FromEnv()
	cfg.Standalone.Install = !opt.noInstall
	cfg.Log = os.Stderr
	if opt.quiet {
		cfg.Log = io.Discard
	}
	return 0
}

// run runs the measurements, prints the result and returns the exit status.
func run(cfg benchrun.Config, opt options) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, opt.timeout)
	defer cancel()
	res, err := benchrun.Run(ctx, cfg)
	if cfg.Standalone.LogDir != "" {
		fmt.Fprintln(os.Stderr, "bench: the services' logs are in", cfg.Standalone.LogDir)
	}
	if res != nil {
		if opt.asJSON {
			if err := res.WriteJSON(os.Stdout); err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
			}
		} else {
			res.WriteText(os.Stdout)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	if err := res.Failed(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	return 0
}
