// Command loadgen simulates a flash sale against a seckill deployment over HTTP and
// reports what happened: counts by outcome, latency percentiles, throughput per second,
// oversell checks, and Redis against MySQL at the end (see devkit/loadgen).
//
//	go run -tags no_k8s ./cmd/loadgen -buyers 20000 -c 64 -stock 1000 -html report.html
//
// Tokens are minted from the gateway's secrets: -buyer-secret / -merchant-secret, else
// SECKILL_BUYER_SECRET / SECKILL_MERCHANT_SECRET, else the secrets in -api-config (default
// etc/seckill-api.yaml). It targets loopback only unless -allow-remote is given. The exit
// status is 0 when every check passed, 1 when one failed, 2 when the sale could not run.
//
// -rate R sends the buyers open loop, R per second whatever the answers, each latency
// counted from the buyer's scheduled time (docs/OPERATIONS.md "Measuring").
//
// -find-capacity searches for the highest such rate whose p99 stays within -p99-bound
// (default 50ms) with no errors, and reports each step and the rate found.
//
// -cost-redis, -cost-pids and -cost-lag-wait report what the sale costs the system: Redis
// memory per order, the services' RSS at -cost-checkpoint buyers and at the end, the
// writer's lag after the reserve phase (make tenm: ten million buyers).
//
// -draw-seconds D runs the opening draw's sales instead (-draw-seeds N of them, then one
// without a draw for contrast) and reports win rates by arrival and by requests sent.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zeromicro/go-zero/core/conf"

	"github.com/seckill/seckill/devkit/loadgen"
)

func main() {
	var cfg loadgen.Config
	var apiConfig, htmlPath, jsonPath string
	flag.StringVar(&cfg.BaseURL, "url", "http://127.0.0.1:8888", "gateway base URL")
	flag.BoolVar(&cfg.AllowRemote, "allow-remote", false,
		"allow a non-loopback target (only a deployment you operate)")
	flag.StringVar(&apiConfig, "api-config", "etc/seckill-api.yaml",
		"gateway config to read the JWT secrets from when not given otherwise")
	flag.StringVar(&cfg.BuyerSecret, "buyer-secret", "", "BuyerAuth.AccessSecret (mints a token per simulated user)")
	flag.StringVar(&cfg.MerchantSecret, "merchant-secret", "", "MerchantAuth.AccessSecret")
	flag.StringVar(&cfg.MerchantToken, "merchant-token", "", "a merchant token to use instead of minting one")
	flag.StringVar(&cfg.PaymentSecret, "payment-secret", "",
		"PaymentAuth.Secret: pay through the provider's signed notification (else the buyer's pay route)")
	flag.Int64Var(&cfg.Price, "price", 100, "unit price of a created activity (smallest currency unit)")
	flag.Int64Var(&cfg.MerchantID, "merchant-id", 1, "merchant id (claim mid) of minted merchant tokens")
	flag.IntVar(&cfg.Buyers, "buyers", 20000, "simulated buyers, one reservation each")
	flag.IntVar(&cfg.Concurrency, "c", 64, "concurrent requests (closed loop)")
	flag.Float64Var(&cfg.Rate, "rate", 0, "open loop: buyers arrive at this constant rate per second, "+
		"each latency counted from its scheduled time (default: closed loop on -c)")
	flag.IntVar(&cfg.MaxInFlight, "max-inflight", loadgen.DefaultMaxInFlight,
		"open loop: cap on requests in flight (buyers scheduled while it is hit wait and are counted late)")
	flag.DurationVar(&cfg.MaxDuration, "max-duration", 30*time.Second, "bound on the reservation phase")
	flag.IntVar(&cfg.Retries, "retries", 2, "retries of BUSY / RATE_LIMITED / transport failures (same request_id)")
	flag.DurationVar(&cfg.Timeout, "timeout", 10*time.Second, "per-request timeout")
	flag.Int64Var(&cfg.ActivityID, "activity", 0, "reuse this activity instead of creating one")
	flag.Int64Var(&cfg.SkuID, "sku", 1, "sku_id of a created activity")
	flag.Int64Var(&cfg.Stock, "stock", 1000, "stock of a created activity")
	flag.Int64Var(&cfg.Quantity, "quantity", 1, "units per reservation")
	flag.Int64Var(&cfg.PerUserLimit, "per-user-limit", 0, "per_user_limit of a created activity (default: quantity)")
	flag.DurationVar(&cfg.PayTimeout, "pay-timeout", 0, "pay timeout of a created activity, whole seconds "+
		"(default: max-duration + 2s, so nothing expires while buyers arrive)")
	flag.Float64Var(&cfg.PayFraction, "pay", 0.6, "fraction of reservations paid")
	flag.Float64Var(&cfg.CancelFraction, "cancel", 0.2, "fraction of reservations cancelled (the rest expire)")
	flag.Int64Var(&cfg.UIDBase, "uid-base", 0, "simulated users are uid-base+1.. (default: from the clock)")
	flag.Uint64Var(&cfg.Seed, "seed", 0, "seed choosing which orders are paid/cancelled (default: from the clock)")
	flag.DurationVar(&cfg.ExpiryGrace, "expiry-grace", 30*time.Second, "extra wait for expiry beyond pay timeout + 5s")
	flag.DurationVar(&cfg.ReconcileWait, "reconcile-wait", 60*time.Second,
		"how long to wait for reconciliation to report consistent")
	flag.StringVar(&htmlPath, "html", "", "write an HTML report (latency histogram, throughput chart) to this file")
	flag.StringVar(&jsonPath, "json", "", "write the report as JSON to this file")
	flag.Int64Var(&cfg.DrawSeconds, "draw-seconds", 0,
		"draw mode: create each activity with this opening draw (API.md), report fairness")
	flag.IntVar(&cfg.DrawSeeds, "draw-seeds", 1,
		"draw mode: sales with a draw (distinct activities, so seeds), then one without")
	flag.Float64Var(&cfg.HeavyFraction, "draw-heavy", 0.1,
		"draw mode: fraction of buyers sending -draw-heavy-requests reservations")
	flag.IntVar(&cfg.HeavyRequests, "draw-heavy-requests", 10,
		"draw mode: reservations a heavy buyer sends at once (distinct request ids)")
	flag.DurationVar(&cfg.DrawArrival, "draw-arrival", 0,
		"draw mode: buyers arrive evenly over this span (default 80% of the window)")
	findCapacity, search := capacityFlags()
	costFlags(&cfg.Cost)
	quiet := flag.Bool("q", false, "no progress bar")
	cpuProfile := flag.String("cpuprofile", "", "write the load generator's own CPU profile to this file")
	flag.Parse()
	if !*findCapacity {
		search = nil
	}
	os.Exit(run(cfg, search, apiConfig, htmlPath, jsonPath, *quiet, *cpuProfile))
}

// capacityFlags are -find-capacity's flags.
func capacityFlags() (*bool, *loadgen.CapacitySearch) {
	var s loadgen.CapacitySearch
	on := flag.Bool("find-capacity", false, "search for the highest open-loop rate of reservations with "+
		"p99 <= -p99-bound and no errors (a fresh activity per step; -rate is the first step's rate, default 100)")
	flag.DurationVar(&s.P99Bound, "p99-bound", 50*time.Millisecond, "find-capacity: the p99 a rate must keep")
	flag.DurationVar(&s.Step, "capacity-step", 3*time.Second, "find-capacity: the length of each step's schedule")
	flag.DurationVar(&s.Budget, "capacity-budget", 60*time.Second,
		"find-capacity: bound on the whole search (the best rate so far when spent)")
	flag.Float64Var(&s.MaxRate, "max-rate", 200_000, "find-capacity: the ramp stops here")
	return on, &s
}

// costFlags are the flags of what the sale costs the system (loadgen.CostConfig).
func costFlags(c *loadgen.CostConfig) {
	flag.StringVar(&c.RedisAddr, "cost-redis", "", "cost: the services' Redis (host:port, used by no one else): "+
		"used_memory less client buffers per order, MEMORY USAGE of the activity's keys")
	flag.StringVar(&c.KeyPrefix, "cost-key-prefix", "", "cost: the services' Redis key prefix")
	flag.Func("cost-pids", "cost: the services' process ids, comma-separated: their RSS and CPU at "+
		"-cost-checkpoint buyers and at the reserve phase's end", func(s string) error {
		for _, f := range strings.Split(s, ",") {
			pid, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return err
			}
			c.PIDs = append(c.PIDs, pid)
		}
		return nil
	})
	flag.IntVar(&c.Checkpoint, "cost-checkpoint", 0, "cost: buyers answered at the first readings (default buyers/10)")
	flag.DurationVar(&c.LagWait, "cost-lag-wait", 0, "cost: after the reserve phase, wait up to this long for "+
		"MySQL's books to equal Redis's and report the writer's lag (0: not measured)")
	flag.Float64Var(&c.MaxBytesPerOrder, "cost-max-bytes", 350, "cost: target of Redis bytes per order")
	flag.Float64Var(&c.MaxRSSGrowth, "cost-max-rss-growth", 1.5, "cost: target of RSS at the end ÷ at the checkpoint")
	flag.DurationVar(&c.MaxLag, "cost-max-lag", 5*time.Second, "cost: target of the writer's lag")
}

// run is the command after its flags; it returns the exit status.
func run(cfg loadgen.Config, search *loadgen.CapacitySearch, apiConfig, htmlPath, jsonPath string, quiet bool,
	cpuProfile string) int {
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			return 2
		}
		defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
	}

	if err := secrets(&cfg, apiConfig); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		return 2
	}
	if !quiet {
		cfg.Progress = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if search != nil {
		return capacityMode(ctx, cfg, *search, htmlPath, jsonPath)
	}
	if cfg.DrawSeconds > 0 {
		return drawMode(ctx, cfg, htmlPath, jsonPath)
	}
	report, err := loadgen.Run(ctx, cfg)
	if report != nil {
		report.WriteText(os.Stdout)
		if werr := write(report, htmlPath, jsonPath); werr != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", werr)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		return 2
	}
	if !report.OK() {
		return 1
	}
	return 0
}

// drawMode runs the opening-draw sales and returns the exit status.
func drawMode(ctx context.Context, cfg loadgen.Config, htmlPath, jsonPath string) int {
	if htmlPath != "" {
		fmt.Fprintln(os.Stderr, "loadgen: -html is not written in draw mode (use -json)")
	}
	report, err := loadgen.RunDraw(ctx, cfg)
	if report != nil {
		report.WriteText(os.Stdout)
		if jsonPath != "" {
			if werr := writeJSON(report, jsonPath); werr != nil {
				fmt.Fprintln(os.Stderr, "loadgen:", werr)
			}
		}
	}
	switch {
	case err != nil:
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		return 2
	case !report.OK():
		return 1
	}
	return 0
}

// capacityMode runs the capacity search and returns the exit status: 0 when a rate passed,
// 1 when none did, 2 when the search could not run.
func capacityMode(ctx context.Context, cfg loadgen.Config, s loadgen.CapacitySearch, htmlPath, jsonPath string) int {
	s.StartRate = cfg.Rate
	report, err := loadgen.FindCapacity(ctx, cfg, s)
	if report != nil {
		report.WriteText(os.Stdout)
		if werr := write(report, htmlPath, jsonPath); werr != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", werr)
		}
	}
	switch {
	case err != nil:
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		return 2
	case report.Capacity == 0:
		return 1
	}
	return 0
}

// secrets fills unset secrets from the environment, then from the gateway's config file.
func secrets(cfg *loadgen.Config, apiConfig string) error {
	if cfg.BuyerSecret == "" {
		cfg.BuyerSecret = os.Getenv("SECKILL_BUYER_SECRET")
	}
	if cfg.MerchantSecret == "" {
		cfg.MerchantSecret = os.Getenv("SECKILL_MERCHANT_SECRET")
	}
	if cfg.PaymentSecret == "" {
		cfg.PaymentSecret = os.Getenv("SECKILL_PAYMENT_SECRET")
	}
	if cfg.BuyerSecret != "" && (cfg.MerchantSecret != "" || cfg.MerchantToken != "") || apiConfig == "" {
		return nil
	}
	var c struct {
		BuyerAuth    struct{ AccessSecret string }
		MerchantAuth struct{ AccessSecret string }
		PaymentAuth  struct{ Secret string } `json:",optional"`
	}
	if err := conf.Load(apiConfig, &c); err != nil {
		return fmt.Errorf("no secrets given and %s unreadable: %w", apiConfig, err)
	}
	if cfg.BuyerSecret == "" {
		cfg.BuyerSecret = c.BuyerAuth.AccessSecret
	}
	if cfg.MerchantSecret == "" {
		cfg.MerchantSecret = c.MerchantAuth.AccessSecret
	}
	if cfg.PaymentSecret == "" {
		cfg.PaymentSecret = c.PaymentAuth.Secret
	}
	return nil
}

// htmlReport is a report with a page: a sale's or a capacity search's.
type htmlReport interface{ WriteHTML(w io.Writer) error }

func write(r htmlReport, htmlPath, jsonPath string) error {
	if htmlPath != "" {
		f, err := os.Create(htmlPath)
		if err != nil {
			return err
		}
		if err := r.WriteHTML(f); err != nil {
			_ = f.Close() // the write's error is the one to report
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "HTML report:", htmlPath)
	}
	if jsonPath != "" {
		return writeJSON(r, jsonPath)
	}
	return nil
}

func writeJSON(r any, path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
