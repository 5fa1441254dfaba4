// Package benchrun is `make bench`: in one run it measures the hot paths beside their
// floors and prints the ratios.
//
//  1. Go benchmarks (`go test -bench`): stock.Reserve vs a raw EVALSHA (internal/stock),
//     the writer's group commit vs one transaction per event (mq/internal/writer).
//  2. The standalone system (devkit/standalone) started in-process in a named profile,
//     driven on loopback: successful reservations through the gateway (a load-generator
//     sale, devkit/loadgen) beside a bare HTTP->zRPC echo, and sold-out rejections
//     through the gateway beside a bare go-zero handler (devkit/baseline), all with the
//     same client settings and bounds.
//
// Absolute numbers on a small shared machine mean little; the ratios are the figures.
package benchrun

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/zeromicro/go-zero/core/conf"
	"github.com/zeromicro/go-zero/core/load"
	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/devkit/standalone"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/telemetry"
)

// Config is one bench run.
type Config struct {
	// Standalone is the system to start (its dependencies, etc dir, Mode). Mode names the
	// profile; default dev.
	Standalone standalone.Config

	Dir           string        // repository root, where `go test` runs (default ".")
	Go            string        // the go command (default "go")
	Tags          string        // build tags of `go test` (default no_k8s)
	GoTestTimeout time.Duration // per `go test` (default 3m)
	StockN        int           // -benchtime of Reserve / RawEvalsha (default 20000)
	WriterN       int           // -benchtime of the writer benchmarks (default 4000)

	// The "redis us per reservation" row (redisus.go): RedisN reservations per measurement,
	// in batches of RedisBatch (and twice that) beside batches of one (default 4096, 32).
	RedisN, RedisBatch int

	Concurrency int           // HTTP clients in flight (default 64)
	Requests    int           // per HTTP measurement: the count bound (default 10000)
	MaxDuration time.Duration // per HTTP measurement: the time bound (default 15s)
	// The sold-out storm: a sale of StormStock units to StormBuyers buyers (default 1,000
	// and 20,000), in which almost every answer is SOLD_OUT.
	StormStock, StormBuyers int
	// The "sale vs bare" row (sale.go): a sale of SaleStock units to SaleBuyers buyers at
	// SaleConc clients beside the bare handler at SaleConc, each bounded by SaleMaxDuration
	// (default 10,000, 1,000,000, 256, 10m); SkipSale leaves it out.
	SaleBuyers, SaleStock, SaleConc int
	SaleMaxDuration                 time.Duration
	SkipSale                        bool
	// SalePprof, when set, is a directory for CPU profiles of the row's first round (this
	// process: the bare handler and its clients, then the whole sale), each the first
	// SalePprofFor of its run (default 20s).
	SalePprof    string
	SalePprofFor time.Duration

	// Degrade mode (degrade.go): each burst runs DegradeClients buyers in flight for
	// DegradeDuration (the bound that ends it), at most DegradeRequests buyers, one attempt
	// each (default 128, 3s, 100,000); the semaphore sizes of the sweep after the shipped
	// one (default 4, 16, 64).
	DegradeClients, DegradeRequests int
	DegradeDuration                 time.Duration
	DegradeSweep                    []int

	// Rounds: the Go benchmark pairs and the HTTP rows are measured this many times, the
	// subject and its baseline back to back in each round, and each row reports the median
	// round (default 3; the degrade bursts run once).
	Rounds int

	SkipGo      bool // leave out the Go benchmarks
	SkipHTTP    bool // leave out the HTTP measurements
	SkipDegrade bool // leave out degrade mode
	SkipRedis   bool // leave out the Redis time per reservation
	// SkipProd leaves out the production profile's rows (prod.go): deploy/'s files run as
	// separate processes, the dev profile's sales repeated on them in each round.
	SkipProd bool
	// ProdTopology is the production profile's topology: ProdOne (default), one process of
	// each service, or ProdDeploy, deploy/multinode/topology.yaml's counts (prod.go).
	ProdTopology string
	// ProdPprof, when set, is a directory for CPU profiles of the first round's sales, each
	// ProdPprofFor long from the sale's start (default 4s): the dev profile's process
	// (runtime/pprof, the load generator included) and the production profile's api, rpc and
	// mq (their DevServer's pprof, which the bench then turns on and lists).
	ProdPprof    string
	ProdPprofFor time.Duration

	// The "capacity at p99" row (capacity.go): the highest open-loop rate with p99 <=
	// CapacityP99 and no errors, of the reservations and of the bare handler, each searched
	// in steps of CapacityStep within half of CapacityBudget (default 50 ms, 1 s, 80 s).
	CapacityP99, CapacityStep, CapacityBudget time.Duration
	SkipCapacity                              bool // leave out the capacity row

	Log io.Writer // progress (default: discarded)
}

func (c *Config) defaults() {
	if c.Dir == "" {
		c.Dir = "."
	}
	if c.Go == "" {
		c.Go = "go"
	}
	if c.Tags == "" {
		c.Tags = "no_k8s"
	}
	if c.GoTestTimeout == 0 {
		c.GoTestTimeout = 3 * time.Minute
	}
	if c.StockN == 0 {
		c.StockN = 20000
	}
	if c.WriterN == 0 {
		c.WriterN = 4000
	}
	if c.RedisN == 0 {
		c.RedisN = 4096
	}
	if c.RedisBatch == 0 {
		c.RedisBatch = 32
	}
	if c.Concurrency == 0 {
		c.Concurrency = 64
	}
	if c.Requests == 0 {
		c.Requests = 10000
	}
	if c.MaxDuration == 0 {
		c.MaxDuration = 15 * time.Second
	}
	if c.StormStock == 0 {
		c.StormStock = 1000
	}
	if c.StormBuyers == 0 {
		c.StormBuyers = 20000
	}
	if c.Rounds == 0 {
		c.Rounds = 3
	}
	if c.DegradeClients == 0 {
		c.DegradeClients = 128
	}
	if c.DegradeRequests == 0 {
		c.DegradeRequests = 100000
	}
	if c.DegradeDuration == 0 {
		c.DegradeDuration = 3 * time.Second
	}
	if c.DegradeSweep == nil {
		c.DegradeSweep = []int{4, 16, 64}
	}
	c.capacityDefaults()
	c.saleDefaults()
	if c.ProdTopology == "" {
		c.ProdTopology = ProdOne
	}
	if c.ProdPprofFor == 0 {
		c.ProdPprofFor = 4 * time.Second
	}
	if c.Standalone.Mode == "" {
		c.Standalone.Mode = "dev"
	}
	if c.Standalone.LogLevel == "" {
		c.Standalone.LogLevel = "error"
	}
	if c.Standalone.APIAddr == "" {
		c.Standalone.APIAddr = "127.0.0.1:0"
	}
	if c.Standalone.EtcDir == "" {
		c.Standalone.EtcDir = filepath.Join(c.Dir, "etc")
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
}

func (c *Config) capacityDefaults() {
	if c.CapacityP99 == 0 {
		c.CapacityP99 = 50 * time.Millisecond
	}
	if c.CapacityStep == 0 {
		c.CapacityStep = time.Second
	}
	if c.CapacityBudget == 0 {
		c.CapacityBudget = 80 * time.Second
	}
}

func (c *Config) validate() error {
	if c.CapacityP99 <= 0 || c.CapacityStep <= 0 || c.CapacityBudget <= 0 {
		return fmt.Errorf("capacity p99 bound (%s), step (%s) and budget (%s) must be positive", c.CapacityP99,
			c.CapacityStep, c.CapacityBudget)
	}
	if c.DegradeClients < 1 || c.DegradeRequests < 1 || c.DegradeDuration <= 0 {
		return fmt.Errorf("degrade clients (%d), requests (%d) and duration (%s) must be positive", c.DegradeClients,
			c.DegradeRequests, c.DegradeDuration)
	}
	if c.ProdTopology != ProdOne && c.ProdTopology != ProdDeploy {
		return fmt.Errorf("production profile topology %q: want %s or %s", c.ProdTopology, ProdOne, ProdDeploy)
	}
	if err := c.saleValidate(); err != nil {
		return err
	}
	if c.Rounds < 1 {
		return fmt.Errorf("rounds (%d) must be positive", c.Rounds)
	}
	if c.RedisN < 1 || c.RedisBatch < 1 || 2*c.RedisBatch > stock.MaxReserveBatch {
		return fmt.Errorf("redis n (%d) must be positive, redis batch (%d) within 1..%d", c.RedisN, c.RedisBatch,
			stock.MaxReserveBatch/2)
	}
	if c.Concurrency < 1 || c.Requests < 1 || c.MaxDuration <= 0 || c.StockN < 1 || c.WriterN < 1 {
		return fmt.Errorf("concurrency (%d), requests (%d), max duration (%s), stock n (%d) and writer n (%d) must be "+
			"positive",
			c.Concurrency, c.Requests, c.MaxDuration, c.StockN, c.WriterN)
	}
	if _, err := os.Stat(filepath.Join(c.Dir, "go.mod")); err != nil && !c.SkipGo {
		return fmt.Errorf("%s is not the repository root (no go.mod): run from there or pass its path", c.Dir)
	}
	return nil
}

// Run starts the system, measures, stops the system and returns the result. An error
// means nothing could be measured (bad config, the system did not start); a measurement
// that failed is a Row with Error set.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg.defaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	logf := func(format string, args ...any) { fmt.Fprintf(cfg.Log, "bench: "+format+"\n", args...) }
	res := &Result{
		Started: time.Now(),
		Machine: machine(),
		Settings: Settings{Concurrency: cfg.Concurrency, Requests: cfg.Requests, MaxDuration: cfg.MaxDuration,
			StockN: cfg.StockN, WriterN: cfg.WriterN},
	}

	sc := cfg.Standalone
	sc.Log = cfg.Log
	if noShed(sc.Mode) {
		// Process-wide and before any server exists: see profile.
		load.Disable()
	}
	if err := setUpLogs(sc); err != nil {
		return nil, fmt.Errorf("go-zero's logger: %w", err)
	}
	logf("starting the standalone system (go-zero Mode %s)", sc.Mode)
	sys, err := standalone.Start(ctx, sc)
	if err != nil {
		return nil, fmt.Errorf("start the standalone system: %w", err)
	}
	defer sys.Close()
	ac := sys.Configs.Gateway
	res.Profile = profile(ac)

	extra := map[string]Measurement{}
	if !cfg.SkipGo {
		res.Rows = append(res.Rows, goRows(ctx, &cfg, sys, logf, &res.Notes, extra)...)
	}
	if !cfg.SkipRedis && ctx.Err() == nil {
		res.Rows = append(res.Rows, redisRow(ctx, &cfg, sys.RedisAddr, logf, &res.Notes))
	}
	if !cfg.SkipHTTP {
		var prod *prodSystem
		if !cfg.SkipProd && ctx.Err() == nil {
			if prod, err = startProd(ctx, &cfg, logf); err != nil {
				return nil, err
			}
			defer prod.close()
		}
		rows, sale := httpRows(ctx, &cfg, sys, ac, prod, logf, &res.Notes)
		res.Rows, res.Sale = append(res.Rows, rows...), sale
		if w, ok := extra[writerBatched]; ok {
			res.Rows = append(res.Rows, drainRow(w, rows))
		}
		if !cfg.SkipSale && ctx.Err() == nil {
			res.Rows = append(res.Rows, saleRow(ctx, &cfg, sys, ac.RestConf, logf, &res.Notes))
		}
	}
	if !cfg.SkipDegrade && ctx.Err() == nil {
		row, d := degradeRows(ctx, &cfg, sys, logf, &res.Notes)
		res.Rows, res.Degrade = append(res.Rows, row), d
	}
	if !cfg.SkipCapacity && ctx.Err() == nil {
		row, capy := capacityRows(ctx, &cfg, sys, logf, &res.Notes)
		res.Rows, res.Capacity = append(res.Rows, row), capy
	}
	res.Notes = append(res.Notes,
		fmt.Sprintf("absolute numbers on %d noisy cores, shared by the clients, every server and the other work of the "+
			"machine, mean little: the ratios are the figures", res.Machine.NumCPU),
		"ratio = rate / baseline rate (1.00x = as fast as the baseline); p99 ratio likewise")
	res.Took = time.Since(res.Started)
	return res, ctx.Err()
}

// drainRow is "writer / reservation rate": the batched writer's events/s beside the
// reservations/s through the gateway, both from this run. A sale's every order is at least
// two events, so the writer keeps up only above 2x.
func drainRow(w Measurement, http []Row) Row {
	row := Row{Label: "writer / reservation rate", Subject: w,
		Baseline: Measurement{Name: "reservations via the gateway", Unit: "/s"}}
	for _, r := range http {
		if r.Label == "reservations" {
			if r.Error != "" {
				row.Error = "reservations: " + r.Error
			}
			row.Baseline = r.Subject
		}
	}
	row.compute()
	row.P99Ratio = 0
	return row
}

// Failed reports whether a row could not be measured or the sale failed its checks.
func (r *Result) Failed() error {
	var errs []error
	for _, row := range r.Rows {
		if row.Error != "" {
			errs = append(errs, fmt.Errorf("%s: %s", row.Label, firstLine(row.Error)))
		}
	}
	if r.Degrade != nil {
		for _, p := range r.Degrade.Points {
			if p.Error != "" {
				errs = append(errs, fmt.Errorf("degrade mode, semaphore %d: %s", p.Concurrency, firstLine(p.Error)))
			}
			if len(p.Failed) > 0 {
				errs = append(errs, fmt.Errorf("degrade mode, semaphore %d, exactly-once: %s", p.Concurrency,
					strings.Join(p.Failed, "; ")))
			}
		}
	}
	if r.Sale != nil && !r.Sale.OK {
		errs = append(errs, fmt.Errorf("the sale failed its checks: %s", strings.Join(r.Sale.Failed, "; ")))
	}
	return errors.Join(errs...)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// setUpLogs sets go-zero's process-wide logger up as the services would (the first SetUp
// holds for the process), before any of them logs: the inventory service logs while it is
// built, before its own SetUp, and go-zero's default writer is stdout, where -json's
// document goes. Without a LogDir the lines go to stderr.
func setUpLogs(sc standalone.Config) error {
	var c logx.LogConf
	if err := conf.FillDefault(&c); err != nil {
		return err
	}
	c.Level, c.Encoding, c.Stat = sc.LogLevel, "plain", false
	if sc.LogDir != "" {
		c.Mode, c.Path = "file", sc.LogDir
		return logx.SetUp(c)
	}
	if err := logx.SetUp(c); err != nil {
		return err
	}
	logx.SetWriter(logx.NewWriter(os.Stderr))
	return nil
}

// noShed reports whether mode is one of go-zero's modes without load shedding.
func noShed(mode string) bool {
	switch mode {
	case "dev", "test", "rt", "pre":
		return true
	}
	return false
}

// profile names the settings the gateway (and, with the same RestConf, the baselines)
// ran with.
func profile(c apiserver.Config) Profile {
	rl := "off"
	if c.RateLimit.Enabled {
		where := "counted in the gateway's memory"
		if c.RateLimit.Shared {
			where = "counted in memory, then in Redis (Shared: a Redis call per reservation)"
		}
		rl = fmt.Sprintf("%d per %d s per buyer, %s", c.RateLimit.Quota, c.RateLimit.Period, where)
	}
	edge := "off"
	if c.Edge.Enabled {
		edge = fmt.Sprintf("on (sold-out mark TTL %s)", c.Edge.SoldOutTTL)
	}
	trace := "trace in the baselines only (the gateway's Telemetry exports no spans: none of go-zero's trace middleware)"
	if telemetry.Exports(c.Telemetry) {
		trace = "trace"
	}
	rest := fmt.Sprintf("every other go-zero rest middleware on as in etc/seckill-api.yaml (timeout %d ms, MaxBytes "+
		"%d, MaxConns %d, breaker, prometheus, %s, recover, gunzip); JWT on the buyer routes and on the echo; the "+
		"gateway's rate limit %s, the echo has none; the gateway's own sold-out / window answers %s; log level %s, "+
		"Log.Stat off",
		c.Timeout, c.MaxBytes, c.MaxConns, trace, rl, edge, c.Log.Level)
	if noShed(c.Mode) {
		return Profile{Name: "noshed-" + c.Mode, Description: fmt.Sprintf(
			"no adaptive load shedding in any server of the process (inventory rpc, writer, gateway, both baselines): "+
				"go-zero Mode %s, and load.Disable() called before any server is built (rpcserver also sets its config up "+
				"before zrpc builds its shedder, which go-zero v1.10.3 does the other way round); the CpuThreshold %d of "+
				"etc/*.yaml is therefore inert; %s",
			c.Mode, c.CpuThreshold, rest)}
	}
	return Profile{Name: "shedding-" + c.Mode, Description: fmt.Sprintf(
		"go-zero Mode %s: adaptive load shedding above CpuThreshold %d per mille of host CPU, which a 2-core load test "+
			"reaches (shed requests count as other, as BUSY through the gateway); %s",
		c.Mode, c.CpuThreshold, rest)}
}

func machine() Machine {
	m := Machine{NumCPU: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}
