package benchrun

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/zeromicro/go-zero/rest"

	"github.com/seckill/seckill/devkit/baseline"
	"github.com/seckill/seckill/devkit/loadgen"
	"github.com/seckill/seckill/devkit/standalone"
)

// The "sale vs bare" row (issue #36): a load-generator sale of Config.SaleStock units to
// Config.SaleBuyers buyers, Config.SaleConc clients in flight, through the dev profile's
// gateway (every answer, reserved or sold out, counts), beside the bare go-zero handler at
// the same concurrency in the same run, its baseline measured right before it. The row's
// metrics are both p99s; a sale that fails the load generator's checks is the row's Error.

const (
	saleLabel = "sale vs bare"
	// saleOnceAfter: a round longer than this is the row's only one (1,000,000 buyers on
	// the 2-core box), not the first of Config.Rounds.
	saleOnceAfter = 2 * time.Minute
	// saleUIDs offsets the row's buyers past every other row's (which stay below 10^12).
	saleUIDs = 1_000_000_000_000

	// MetricSaleP99 and MetricBareP99 are the row's metrics: the sale's p99 and the bare
	// handler's, in milliseconds.
	MetricSaleP99 = "sale p99 ms"
	MetricBareP99 = "bare p99 ms"
	// MetricSaleCPU and MetricBareCPU are the CPU microseconds this process (the load
	// generator and the servers: the gateway, rpc and mq, or the bare handler) spent per
	// answer: the sale's over its reserve phase after the first tenth (cpuCost), the bare
	// handler's over its whole run.
	MetricSaleCPU = "sale cpu us/answer (bench process)"
	MetricBareCPU = "bare cpu us/answer (bench process)"
)

// The targets for the row: at least the bare handler's rate, at most twice its p99.
const (
	saleTargetRatio    = 1.0
	saleTargetP99Ratio = 2.0
)

func (c *Config) saleDefaults() {
	if c.SaleBuyers == 0 {
		c.SaleBuyers = 1_000_000
	}
	if c.SaleStock == 0 {
		c.SaleStock = 10_000
	}
	if c.SaleConc == 0 {
		c.SaleConc = 256
	}
	if c.SaleMaxDuration == 0 {
		c.SaleMaxDuration = 10 * time.Minute
	}
	if c.SalePprofFor == 0 {
		c.SalePprofFor = 20 * time.Second
	}
}

func (c *Config) saleValidate() error {
	if c.SaleBuyers < 1 || c.SaleBuyers > loadgen.MaxBuyers || c.SaleStock < 1 || c.SaleConc < 1 ||
		c.SaleConc > loadgen.MaxConcurrency || c.SaleMaxDuration <= 0 {
		return fmt.Errorf("sale buyers (%d) within 1..%d, stock (%d) positive, concurrency (%d) within 1..%d and "+
			"duration (%s) positive", c.SaleBuyers, loadgen.MaxBuyers, c.SaleStock, c.SaleConc, loadgen.MaxConcurrency,
			c.SaleMaxDuration)
	}
	return nil
}

// saleRow measures the "sale vs bare" row in rounds (the median round), or once when a
// round takes longer than saleOnceAfter.
func saleRow(ctx context.Context, c *Config, sys *standalone.System, bc rest.RestConf,
	logf func(string, ...any), notes *[]string) Row {
	bc.Name, bc.Port = "seckill-bench-sale-baseline", 0
	uidBase := time.Now().Unix()%1_000_000*1_000_000 + saleUIDs
	var rounds []Row
	once := ""
	for i := range c.Rounds {
		logf("sale vs bare: round %d of %d", i+1, c.Rounds)
		start := time.Now()
		var profiled *[]string // the first round's CPU profiles (Config.SalePprof)
		if i == 0 {
			profiled = notes
		}
		row := saleRound(ctx, c, sys, bc, logf, uidBase+int64(i)*(int64(c.SaleBuyers)+10), profiled)
		rounds = append(rounds, row)
		took := time.Since(start)
		if row.Error != "" || ctx.Err() != nil {
			break
		}
		if took > saleOnceAfter && i+1 < c.Rounds {
			once = fmt.Sprintf("measured once: the round took %s (more than %s), not %d rounds; ",
				took.Round(time.Second), saleOnceAfter, c.Rounds)
			break
		}
	}
	row := medianRow(rounds)
	if row.Error == "" {
		row.Detail = once + saleTarget(row)
	}
	return row
}

// saleTarget says whether row meets the targets.
func saleTarget(row Row) string {
	met := "met"
	if row.Ratio < saleTargetRatio || row.P99Ratio <= 0 || row.P99Ratio > saleTargetP99Ratio {
		met = "NOT met"
	}
	return fmt.Sprintf("target (issue #36) rate >= %.1fx the bare handler's and p99 <= %.0fx its p99: %s; the "+
		"sale's load generator checks PASS", saleTargetRatio, saleTargetP99Ratio, met)
}

// saleRound is one round of the row: the bare handler, then the sale, buyers from uidBase on;
// with notes, each profiled as Config.SalePprof says.
func saleRound(ctx context.Context, c *Config, sys *standalone.System, bc rest.RestConf,
	logf func(string, ...any), uidBase int64, notes *[]string) Row {
	row := Row{Label: saleLabel,
		Subject: Measurement{Name: fmt.Sprintf("sale (%d stock, %d buyers, %d clients) answers", c.SaleStock,
			c.SaleBuyers, c.SaleConc), Unit: "/s"},
		Baseline: Measurement{Name: fmt.Sprintf("bare go-zero handler (%d clients)", c.SaleConc), Unit: "/s"}}
	logf("bare handler baseline: %d requests, %d clients", c.SaleBuyers, c.SaleConc)
	bare, err := baseline.StartBare(bc)
	if err != nil {
		row.Error = "bare handler: " + err.Error()
		return row
	}
	lc := baseline.LoadConfig{Concurrency: c.SaleConc, Requests: c.SaleBuyers, MaxDuration: c.SaleMaxDuration,
		Timeout: requestTimeout}
	// The same client work as a buyer of the sale (a token minted, a body encoded).
	profiled := saleProfile(ctx, c, "sale-bare", notes)
	cpu0 := selfCPU()
	res := baseline.Load(ctx, lc, bare.URL,
		buyerRequest(baseline.BarePath, sys.BuyerSecret, uidBase, 1, "bench-sale-bare"), baseline.IsBare)
	bareCPU := selfCPU() - cpu0
	profiled()
	bare.Close()
	row.Baseline = fromLoad(row.Baseline, res)

	logf("gateway: a sale of %d units to %d buyers, %d clients", c.SaleStock, c.SaleBuyers, c.SaleConc)
	cfg := cpuCost(loadgen.Config{BaseURL: sys.APIURL, BuyerSecret: sys.BuyerSecret,
		MerchantSecret: sys.MerchantSecret, Concurrency: c.SaleConc, MaxDuration: c.SaleMaxDuration,
		Timeout: requestTimeout, PayFraction: 1, ExpiryGrace: 10 * time.Second, ReconcileWait: time.Minute,
		Progress: c.Log, Buyers: c.SaleBuyers, Stock: int64(c.SaleStock), UIDBase: uidBase})
	profiled = saleProfile(ctx, c, "sale", notes)
	rep, err := loadgen.Run(ctx, cfg)
	profiled()
	if err != nil {
		row.Error = "load generator: " + err.Error()
		return row
	}
	row.Subject = fromLoadgen(row.Subject, rep, loadgen.CodeOK, loadgen.CodeSoldOut)
	switch v := saleVerdict(rep); {
	case !v.OK:
		row.Error = fmt.Sprintf("the sale (activity %d) failed its checks: %s", v.ActivityID,
			strings.Join(v.Failed, "; "))
	case row.Baseline.Rate == 0:
		row.Error = "no baseline: the bare handler answered nothing well-formed (other " +
			loadgen.FormatCounts(row.Baseline.Other) + ")"
	}
	row.compute()
	row.Metrics = map[string]float64{MetricSaleP99: ms(row.Subject.P99), MetricBareP99: ms(row.Baseline.P99)}
	if v, ok := row.Subject.Metrics[metricCPU+"bench"]; ok {
		row.Metrics[MetricSaleCPU] = v
	}
	if res.Good > 0 {
		row.Metrics[MetricBareCPU] = float64(bareCPU) / 1e3 / float64(res.Good)
	}
	return row
}

// saleProfile starts a CPU profile of this process into Config.SalePprof/<name>.pprof, at
// most SalePprofFor long; the returned func ends it and adds its file (or why it failed) to
// notes. Nothing without SalePprof or notes.
func saleProfile(ctx context.Context, c *Config, name string, notes *[]string) func() {
	if c.SalePprof == "" || notes == nil {
		return func() {}
	}
	pctx, cancel := context.WithCancel(ctx)
	p := profileSelf(pctx, c.SalePprof, name, c.SalePprofFor)
	return func() {
		cancel()
		files, err := p.wait()
		if len(files) > 0 {
			*notes = append(*notes, fmt.Sprintf("CPU profile of %s (at most %s from its start): %v", name,
				c.SalePprofFor, files))
		}
		if err != nil {
			*notes = append(*notes, fmt.Sprintf("CPU profile of %s failed: %v", name, err))
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
