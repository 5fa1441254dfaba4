package benchrun

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zeromicro/go-zero/rest"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/devkit/baseline"
	"github.com/seckill/seckill/devkit/loadgen"
	"github.com/seckill/seckill/devkit/standalone"
)

// requestTimeout is every HTTP request's bound (the load generator's default).
const requestTimeout = 10 * time.Second

// httpRows measures, in this order so that each runs on an idle system: the echo, the
// gateway's reservations (a load-generator sale, whose later phases pay every order and
// wait for reconciliation, so the pipeline has drained before the next measurement), the
// bare handler, the gateway's sold-out rejections, and the sold-out storm (a sale of
// Config.StormStock units to Config.StormBuyers buyers: every answer, reserved or sold out, counts)
// beside the same bare handler; the reservations are a row beside the bare handler too.
func httpRows(ctx context.Context, c *Config, sys *standalone.System, ac apiserver.Config, prod *prodSystem,
	logf func(string, ...any), notes *[]string) ([]Row, *Sale) {
	// Distinct buyers per measurement and round (as the load generator derives them), so
	// that neither per-user limits nor the per-user rate limit carry over.
	uidBase := time.Now().Unix() % 1_000_000 * 1_000_000
	stride := 4*int64(c.Requests) + int64(c.StormBuyers) + 100
	var rounds [][]Row
	var verdict *Sale
	seen := map[string]bool{}
	for round := range c.Rounds {
		logf("HTTP rows: round %d of %d", round+1, c.Rounds)
		var got []string
		rows, v := httpRound(ctx, c, sys, ac, prod, logf, &got, uidBase+int64(round)*stride)
		for _, n := range got { // each round's notes once
			if !seen[n] {
				seen[n] = true
				*notes = append(*notes, n)
			}
		}
		if verdict == nil || verdict.OK && v != nil && !v.OK { // the first failed sale, else the first
			verdict = v
		}
		rounds = append(rounds, rows)
		if ctx.Err() != nil {
			break
		}
	}
	out := make([]Row, len(rounds[0]))
	for i := range out {
		var col []Row
		for _, rows := range rounds {
			col = append(col, rows[i])
		}
		out[i] = medianRow(col)
	}
	return out, verdict
}

// httpRound measures the HTTP rows once, each subject right after its baseline, with
// buyers from uidBase on.
func httpRound(ctx context.Context, c *Config, sys *standalone.System, ac apiserver.Config, prod *prodSystem,
	logf func(string, ...any), notes *[]string, uidBase int64) ([]Row, *Sale) {
	// The baselines get the gateway's own RestConf: the same Mode, timeouts, middlewares.
	bc := ac.RestConf
	bc.Name, bc.Port = "seckill-bench-baseline", 0
	r := &round{c: c, sys: sys, prod: prod, ac: ac, bc: bc, logf: logf, notes: notes, uidBase: uidBase,
		n: int64(c.Requests),
		lc: baseline.LoadConfig{Concurrency: c.Concurrency, Requests: c.Requests, MaxDuration: c.MaxDuration,
			Timeout: requestTimeout},
		sale: loadgen.Config{BaseURL: sys.APIURL, BuyerSecret: sys.BuyerSecret, MerchantSecret: sys.MerchantSecret,
			Concurrency: c.Concurrency, MaxDuration: c.MaxDuration, Timeout: requestTimeout,
			PayFraction: 1, ExpiryGrace: 10 * time.Second, ReconcileWait: time.Minute, Progress: c.Log}}

	reserve := Row{Label: "reservations",
		Subject:  Measurement{Name: "reservations via the gateway", Unit: "/s"},
		Baseline: Measurement{Name: "HTTP->zRPC echo (one Ping)", Unit: "/s"}}
	rejects := Row{Label: "sold-out rejections",
		Subject:  Measurement{Name: "sold-out rejections via the gateway", Unit: "/s"},
		Baseline: Measurement{Name: "bare go-zero handler (fixed JSON)", Unit: "/s"}}
	verdict := r.reservations(ctx, &reserve)
	var prodRows []Row // each right after the dev profile's measurement it is the ratio to
	if r.prod != nil {
		prodRows = append(prodRows, r.prodReservations(ctx, reserve))
	}
	r.rejections(ctx, &rejects)
	if r.prod != nil {
		prodRows = append(prodRows, r.prodRejections(ctx, rejects))
	}
	storm := r.storm(ctx, rejects)

	// The same reservations beside the bare handler: the whole stack's cost over go-zero's floor.
	vsBare := Row{Label: "reservations vs bare", Subject: reserve.Subject, Baseline: rejects.Baseline}
	switch {
	case reserve.Error != "":
		vsBare.Error = reserve.Error
	case rejects.Error != "" && rejects.Baseline.Rate == 0:
		vsBare.Error = "no baseline: " + rejects.Error
	}
	for _, r := range []*Row{&reserve, &vsBare, &rejects, &storm} {
		r.compute()
	}
	*notes = append(*notes,
		"the gateway is driven by devkit/loadgen (one attempt per buyer, no retries); the baselines by "+
			"devkit/baseline.Load with the same transport settings, concurrency, bounds and per-request client work "+
			"(a buyer token minted, a JSON body encoded)",
		"counted: gateway reservations = 200 with a decoded reservation body (each then paid and read back by its "+
			"order_no in the sale's checks), gateway rejections = SOLD_OUT; echo = 200 with a non-empty order_no; "+
			"bare = 200 {\"code\":\"SOLD_OUT\"}; everything else is listed as other and not counted")
	return append([]Row{reserve, vsBare, rejects, storm}, prodRows...), verdict
}

// round is one round of the HTTP rows.
type round struct {
	c       *Config
	sys     *standalone.System
	prod    *prodSystem // the production profile's system (nil: its rows left out)
	ac      apiserver.Config
	bc      rest.RestConf // the baselines' server config
	lc      baseline.LoadConfig
	sale    loadgen.Config // the gateway's sales
	n       int64          // requests per measurement
	uidBase int64
	logf    func(string, ...any)
	notes   *[]string
}

// reservations measures the echo baseline and the gateway's reservations (a sale) into
// row, and returns the sale's verdict.
func (r *round) reservations(ctx context.Context, row *Row) *Sale {
	c, n := r.c, r.n
	r.logf("echo baseline: %d requests, %d clients", c.Requests, c.Concurrency)
	if echo, err := baseline.StartEcho(r.bc, r.ac.BuyerAuth.AccessSecret, r.ac.Inventory); err != nil {
		row.Error = "echo: " + err.Error()
	} else {
		res := baseline.Load(ctx, r.lc, echo.URL,
			buyerRequest(baseline.EchoPath, r.sys.BuyerSecret, r.uidBase, 1, "bench-echo"), baseline.IsReserved)
		echo.Close()
		row.Baseline = fromLoad(row.Baseline, res)
	}

	r.logf("gateway: a sale of %d units to %d buyers, %d clients", n, n, c.Concurrency)
	var verdict *Sale
	cfg := cpuCost(r.sale)
	cfg.Buyers, cfg.Stock, cfg.UIDBase = c.Requests, n, r.uidBase
	var prof *profiling
	if r.profiling() {
		prof = profileSelf(ctx, c.ProdPprof, "dev", c.ProdPprofFor)
	}
	if rep, err := loadgen.Run(ctx, cfg); err != nil {
		row.Error = "load generator: " + err.Error()
	} else {
		row.Subject = fromLoadgen(row.Subject, rep, loadgen.CodeOK)
		verdict = saleVerdict(rep)
	}
	if prof != nil {
		r.noteProfiles("the dev profile's sale (the bench's one process: gateway, rpc, mq, load generator)", prof)
	}
	return verdict
}

// rejections measures the bare handler and the gateway's sold-out rejections into row.
func (r *round) rejections(ctx context.Context, row *Row) {
	c, n, uidBase := r.c, r.n, r.uidBase
	r.logf("bare handler baseline: %d requests, %d clients", c.Requests, c.Concurrency)
	if bare, err := baseline.StartBare(r.bc); err != nil {
		row.Error = "bare handler: " + err.Error()
	} else {
		// The same client work as a buyer of the sale (a token minted, a body encoded);
		// the bare route has no JWT and ignores both.
		res := baseline.Load(ctx, r.lc, bare.URL,
			buyerRequest(baseline.BarePath, r.sys.BuyerSecret, uidBase, 1, "bench-bare"), baseline.IsBare)
		bare.Close()
		row.Baseline = fromLoad(row.Baseline, res)
	}

	r.logf("gateway: %d buyers for a sold-out activity, %d clients", n, c.Concurrency)
	aid, err := soldOutActivity(ctx, r.sale, uidBase+2*n)
	if err != nil {
		row.Error = err.Error()
		return
	}
	cfg := cpuCost(r.sale)
	cfg.ActivityID, cfg.Buyers, cfg.UIDBase = aid, c.Requests, uidBase+n
	if rep, err := loadgen.Run(ctx, cfg); err != nil {
		row.Error = "load generator: " + err.Error()
	} else {
		row.Subject = fromLoadgen(row.Subject, rep, loadgen.CodeSoldOut)
	}
	// The load generator classifies by the body's code word; check one rejection's
	// status too.
	probe := baseline.Load(ctx, baseline.LoadConfig{Concurrency: 1, Requests: 1, Timeout: requestTimeout},
		r.sys.APIURL, buyerRequest(apiclient.ReservePath, r.sys.BuyerSecret, uidBase+2*n+1, aid, "bench-probe"),
		baseline.IsSoldOut)
	*r.notes = append(*r.notes, fmt.Sprintf("one more rejection checked strictly (409 and JSON code SOLD_OUT): %s",
		map[bool]string{true: "ok", false: "NOT WELL-FORMED: " + loadgen.FormatCounts(probe.Other)}[probe.Good == 1]))
}

// storm measures the sold-out storm beside the rejections' baseline.
func (r *round) storm(ctx context.Context, rejects Row) Row {
	c := r.c
	storm := Row{Label: "sold-out storm",
		Subject: Measurement{Name: fmt.Sprintf("sold-out storm (%d stock, %d buyers) answers", c.StormStock,
			c.StormBuyers), Unit: "/s"},
		Baseline: rejects.Baseline}
	r.logf("gateway: a sale of %d units to %d buyers (the sold-out storm), %d clients", c.StormStock, c.StormBuyers,
		c.Concurrency)
	cfg := r.sale
	cfg.Buyers, cfg.Stock, cfg.UIDBase = c.StormBuyers, int64(c.StormStock), r.uidBase+3*r.n+10
	if rep, err := loadgen.Run(ctx, cfg); err != nil {
		storm.Error = "load generator: " + err.Error()
	} else {
		storm.Subject = fromLoadgen(storm.Subject, rep, loadgen.CodeOK, loadgen.CodeSoldOut)
		if v := saleVerdict(rep); !v.OK {
			// Under load shedding (-mode pro) the sale's read-backs can be shed: say so, the
			// rate of well-formed answers stands.
			*r.notes = append(*r.notes, "the storm's sale failed its checks: "+strings.Join(v.Failed, "; "))
		}
	}
	if rejects.Error != "" && storm.Error == "" {
		storm.Error = "no baseline: " + rejects.Error
	}
	return storm
}

// soldOutActivity creates an activity of one unit and sells it (a one-buyer sale, paid).
func soldOutActivity(ctx context.Context, base loadgen.Config, uidBase int64) (int64, error) {
	cfg := base
	cfg.Buyers, cfg.Concurrency, cfg.Stock, cfg.UIDBase, cfg.Progress = 1, 1, 1, uidBase, nil
	rep, err := loadgen.Run(ctx, cfg)
	if err != nil {
		return 0, fmt.Errorf("sell out an activity: %w", err)
	}
	if rep.Reserved != 1 || rep.Paid() != 1 {
		return 0, fmt.Errorf("sell out an activity: reserved %d, paid %d of its one unit (attempts %v)", rep.Reserved,
			rep.Paid(), rep.Attempts)
	}
	return rep.ActivityID, nil
}

// buyerRequest builds request i as a buyer of the load generator would: its own token,
// minted as the load generator mints its buyers' (loadgen.BuyerTokens), a reservation body,
// to path; the baselines' clients so do the same work per request as the sales' clients.
func buyerRequest(path, secret string, uidBase, activityID int64, prefix string) func(i int) (baseline.Request, error) {
	mint, err := loadgen.BuyerTokens(secret, loadgen.BuyerTokenTTL, uidBase+1)
	return func(i int) (baseline.Request, error) {
		if err != nil {
			return baseline.Request{}, err
		}
		token, err := mint(uidBase + int64(i) + 1)
		if err != nil {
			return baseline.Request{}, err
		}
		return baseline.Request{Path: path, Token: token,
			Body: apiclient.ReserveBody(activityID, 1, prefix+"-"+strconv.Itoa(i))}, nil
	}
}

// fromLoad fills m from a baseline load run.
func fromLoad(m Measurement, r baseline.LoadResult) Measurement {
	lat := loadgen.Summarize(r.Latencies)
	m.Count, m.Other, m.NotSent, m.Elapsed = r.Good, r.Other, r.NotSent, r.Elapsed
	m.P50, m.P99, m.Rate = lat.P50, lat.P99, r.Rate()
	return m
}

// fromLoadgen fills m from the reserve phase of a load-generator run: the attempts with
// an outcome in want count, every other outcome is listed.
func fromLoadgen(m Measurement, rep *loadgen.Report, want ...string) Measurement {
	m.Other = map[string]int{}
	for code, k := range rep.Attempts {
		if slices.Contains(want, code) {
			m.Count += k
		} else {
			m.Other[code] = k
		}
	}
	m.NotSent, m.Elapsed = rep.NotSent, rep.ReserveDuration
	m.P50, m.P99 = rep.Latency.P50, rep.Latency.P99
	m.Metrics = cpuMetrics(rep.Cost)
	if rep.ReserveDuration > 0 {
		m.Rate = float64(m.Count) / rep.ReserveDuration.Seconds()
	}
	return m
}

func saleVerdict(rep *loadgen.Report) *Sale {
	s := &Sale{ActivityID: rep.ActivityID, OK: rep.OK(), Reconcile: rep.Reconcile}
	for _, ch := range rep.Checks {
		if !ch.Skip && !ch.OK {
			s.Failed = append(s.Failed, ch.Name+": "+ch.Detail)
		}
	}
	return s
}
