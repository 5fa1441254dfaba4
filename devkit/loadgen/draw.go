package loadgen

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/internal/authtoken"
)

// Draw-mode bounds and defaults.
const (
	MaxDrawBuyers = 1_000_000 // a draw run keeps every buyer's state
	MaxDrawSeeds  = 100
	drawLead      = 2 * time.Second // from creating an activity to its start: warm-up happens before
)

// drawDefaults fills the draw fields. A pay timeout left unset becomes 10 minutes: the
// winners' orders must not expire while their outcomes and the books are read.
func (c *Config) drawDefaults() {
	if c.PayTimeout == 0 {
		c.PayTimeout = 10 * time.Minute
	}
	c.Defaults()
	if c.DrawSeeds == 0 {
		c.DrawSeeds = 1
	}
	if c.HeavyFraction == 0 {
		c.HeavyFraction = 0.1
	}
	if c.HeavyRequests == 0 {
		c.HeavyRequests = 10
	}
	if c.DrawArrival == 0 {
		c.DrawArrival = time.Duration(c.DrawSeconds) * time.Second * 8 / 10
	}
	if c.DrawWait == 0 {
		c.DrawWait = time.Minute
	}
}

func (c *Config) validateDraw() error {
	var errs []error
	if err := c.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.DrawSeconds < 1 || c.DrawSeconds > 600 {
		errs = append(errs, fmt.Errorf("draw seconds %d must be within 1..600 (API.md)", c.DrawSeconds))
	}
	if c.DrawSeeds < 1 || c.DrawSeeds > MaxDrawSeeds || c.Buyers > MaxDrawBuyers {
		errs = append(errs, fmt.Errorf("draw seeds (%d) and buyers (%d) must be within 1..%d and 1..%d",
			c.DrawSeeds, c.Buyers, MaxDrawSeeds, MaxDrawBuyers))
	}
	if c.HeavyFraction < 0 || c.HeavyFraction > 1 || c.HeavyRequests < 1 || c.HeavyRequests > 100 {
		errs = append(errs, fmt.Errorf("heavy fraction %g must be within 0..1 and heavy requests %d within 1..100",
			c.HeavyFraction, c.HeavyRequests))
	}
	if c.DrawArrival < 0 || c.DrawArrival > time.Duration(c.DrawSeconds)*time.Second {
		errs = append(errs, fmt.Errorf("draw arrival %s must be within the window of %ds", c.DrawArrival, c.DrawSeconds))
	}
	return errors.Join(errs...)
}

// drawBuyer is one simulated buyer of a draw-mode sale.
type drawBuyer struct {
	uid   int64
	heavy bool

	mu      sync.Mutex
	rank    int64               // its place by sent (1, 2, ...) once every buyer arrived; 0: none accepted
	sent    time.Time           // when its earliest accepted request was sent (zero: none yet)
	entry   string              // the entry's request id (draw) once queued
	outcome string              // "won", "lost", or "" while unknown
	orders  map[string]struct{} // order numbers it was answered with
	last    string              // its last request's final code
}

func (b *drawBuyer) order(no string) {
	if b.orders == nil {
		b.orders = map[string]struct{}{}
	}
	b.orders[no] = struct{}{}
}

// RunDraw runs cfg.DrawSeeds sales with an opening draw of cfg.DrawSeconds, then the same
// arrivals without a draw, and reports each sale's checks and fairness and the mean ratios.
// An error means a sale could not be set up or was interrupted.
func RunDraw(ctx context.Context, cfg Config) (*DrawReport, error) {
	cfg.drawDefaults()
	if err := cfg.validateDraw(); err != nil {
		return nil, err
	}
	pinned, err := checkTarget(ctx, cfg.BaseURL, cfg.AllowRemote)
	if err != nil {
		return nil, err
	}
	merchant := cfg.MerchantToken
	if merchant == "" {
		if merchant, err = authtoken.Merchant(cfg.MerchantSecret, cfg.MerchantID, 24*time.Hour); err != nil {
			return nil, err
		}
	}
	tokens, err := newBuyerTokens(cfg.BuyerSecret, BuyerTokenTTL, cfg.UIDBase+1)
	if err != nil {
		return nil, err
	}
	c := newClient(cfg.BaseURL, cfg.Concurrency+cfg.HeavyRequests, cfg.Timeout, pinned)
	defer c.Close()
	rep := &DrawReport{Target: cfg.BaseURL, Started: time.Now(), Buyers: cfg.Buyers, Stock: cfg.Stock,
		DrawSeconds: cfg.DrawSeconds, Seeds: cfg.DrawSeeds, HeavyFraction: cfg.HeavyFraction,
		HeavyRequests: cfg.HeavyRequests, Concurrency: cfg.Concurrency, Arrival: cfg.DrawArrival}
	prog := newProgress(cfg.Progress)
	for s := 0; s <= cfg.DrawSeeds; s++ {
		d := cfg.DrawSeconds
		if s == cfg.DrawSeeds {
			d = 0 // the contrast
		}
		var idb [4]byte
		_, _ = rand.Read(idb[:])
		g := &run{cfg: cfg, c: c, merchant: merchant, tokens: tokens, id: hex.EncodeToString(idb[:]),
			r: &Report{Target: cfg.BaseURL, Errors: map[string]int{}}, prog: prog}
		sale, err := g.drawSale(ctx, d, s)
		if sale != nil {
			if d == 0 {
				rep.Contrast = sale
			} else {
				rep.Sales = append(rep.Sales, sale)
			}
		}
		if err != nil {
			return rep, err
		}
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
	}
	rep.summarize()
	return rep, nil
}

// drawSale is one sale: index s picks its buyers (uids and heavy ones); d = 0 is no draw.
func (g *run) drawSale(ctx context.Context, d int64, s int) (*DrawSale, error) {
	cfg := g.cfg
	sale := &DrawSale{DrawSeconds: d, Buyers: cfg.Buyers, Late: map[string]int{}, Errors: map[string]int{}}
	start := time.Now().Add(drawLead).Truncate(time.Second).Add(time.Second)
	a, err := g.c.Create(ctx, g.merchant, apiclient.NewActivity{
		SkuID: cfg.SkuID, Name: "loadgen draw " + g.id, Stock: cfg.Stock,
		StartTime: start.Unix(), EndTime: start.Add(time.Hour).Unix() + d,
		PerUserLimit: cfg.PerUserLimit, PayTimeoutSeconds: int64(cfg.PayTimeout / time.Second), DrawSeconds: d,
	})
	if err != nil {
		return nil, fmt.Errorf("create activity: %w", err)
	}
	g.r.ActivityID, g.r.Created, sale.ActivityID = a.ActivityID, true, a.ActivityID
	w, err := g.c.Warmup(ctx, g.merchant, a.ActivityID)
	if err != nil {
		return sale, fmt.Errorf("warm up: %w", err)
	}
	sale.Stock = w.Remaining

	// The buyers: uids of their own per sale, HeavyFraction of them heavy (by the seed).
	rng := mrand.New(mrand.NewPCG(cfg.Seed+uint64(s), uint64(s)))
	buyers := make([]*drawBuyer, cfg.Buyers)
	for i := range buyers {
		buyers[i] = &drawBuyer{uid: cfg.UIDBase + int64(s*cfg.Buyers+i) + 1, heavy: rng.Float64() < cfg.HeavyFraction}
	}
	what := "no draw (contrast)"
	if d > 0 {
		what = fmt.Sprintf("draw of %ds", d)
	}
	g.prog.phase("activity %d (%s): %d buyers arrive over %s from %s", a.ActivityID, what, cfg.Buyers,
		cfg.DrawArrival, start.Format(time.TimeOnly))
	sleep(ctx, time.Until(start.Add(50*time.Millisecond)))
	drawAt := start.Add(time.Duration(d) * time.Second)
	g.arrive(ctx, sale, buyers, start)
	if d > 0 {
		g.pollOutcomes(ctx, sale, buyers, drawAt)
	}
	g.verifyDraw(ctx, sale, buyers)
	if d > 0 {
		g.verifyAudit(ctx, sale, buyers)
	}
	return sale, nil
}

// arrive sends every buyer's reservations, buyer i not before start + i/N of DrawArrival, and
// ranks the buyers by when they sent their earliest accepted request.
func (g *run) arrive(ctx context.Context, sale *DrawSale, buyers []*drawBuyer, start time.Time) {
	cfg := g.cfg
	rec := newRecorder(time.Now())
	g.prog.startBar("arrive", len(buyers))
	Drive{N: len(buyers), Workers: cfg.Concurrency, Start: start, Spread: cfg.DrawArrival}.Run(ctx, func(i int) {
		b := buyers[i]
		n := 1
		if b.heavy {
			n = cfg.HeavyRequests
		}
		token, err := g.tokens.buyer(b.uid)
		if err != nil {
			b.last = "TOKEN_ERROR"
			g.prog.buyerDone(b.last)
			return
		}
		var wg sync.WaitGroup
		for k := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g.reserveAs(ctx, rec, sale, b, token, "lgd-"+g.id+"-"+strconv.Itoa(i)+"-"+strconv.Itoa(k))
			}()
		}
		wg.Wait()
		g.prog.buyerDone(b.last)
	}, nil)
	g.prog.endBar()
	rankBySent(buyers)
	lat, codes, _ := rec.snapshot()
	sale.ArrivalDuration = time.Since(rec.start)
	sale.Requests, sale.Attempts, sale.Latency = lat.Count(), codes, lat.Summary()
}

// reserveAs sends one reservation of buyer b (retried as cfg.Retries says) and records its
// answer: an accepted one (a 202 entry in a draw, a 200, SOLD_OUT or LIMIT_EXCEEDED without
// one) with when its last attempt was sent.
func (g *run) reserveAs(ctx context.Context, rec *recorder, sale *DrawSale, b *drawBuyer, token, rid string) {
	body := apiclient.ReserveBody(g.r.ActivityID, g.cfg.Quantity, rid)
	var resp apiclient.Reservation // a 202 entry, or a 200 reservation (no draw, or after it)
	var sent time.Time
	code := g.withRetries(ctx, rec, func() (string, time.Duration) {
		var m apiclient.Meta
		sent = time.Now()
		resp, m, _ = g.c.Reserve(ctx, token, body)
		g.prog.attempt()
		return m.Code, m.Took
	})
	b.mu.Lock()
	defer b.mu.Unlock()
	accepted := code == CodeQueued || code == CodeOK || code == CodeSoldOut || code == "LIMIT_EXCEEDED"
	if accepted && (code == CodeQueued || sale.DrawSeconds == 0) && (b.sent.IsZero() || sent.Before(b.sent)) {
		b.sent = sent
	}
	switch code {
	case CodeQueued:
		if b.entry == "" {
			b.entry = resp.RequestID
		}
	case CodeOK:
		b.order(resp.OrderNo)
	}
	if b.last == "" || code == CodeQueued || code == CodeOK {
		b.last = code
	}
}

// rankBySent gives the buyers with an accepted request their places 1, 2, ... by when they
// sent it. Not by when its answer came: a reservation's 200 waits for Kafka's acknowledgement
// while a later buyer's SOLD_OUT comes from the gateway's mark at once, and under load the
// first buyers without a draw, who took the stock, were ranked behind those they beat.
func rankBySent(buyers []*drawBuyer) {
	var ranked []*drawBuyer
	for _, b := range buyers {
		if !b.sent.IsZero() {
			ranked = append(ranked, b)
		}
	}
	sort.SliceStable(ranked, func(i, j int) bool { return ranked[i].sent.Before(ranked[j].sent) })
	for i, b := range ranked {
		b.rank = int64(i + 1)
	}
}

// pollOutcomes asks every entrant's entry (GET /v1/seckill/entries/{id}) from draw_at on,
// in rounds, until each is won or lost or DrawWait has passed.
func (g *run) pollOutcomes(ctx context.Context, sale *DrawSale, buyers []*drawBuyer, drawAt time.Time) {
	var pending []*drawBuyer
	for _, b := range buyers {
		if b.entry != "" {
			pending = append(pending, b)
		}
	}
	g.prog.phase("poll: %d entrants from draw_at %s", len(pending), drawAt.Format(time.TimeOnly))
	sleep(ctx, time.Until(drawAt))
	deadline := drawAt.Add(g.cfg.DrawWait)
	rec := newRecorder(time.Now())
	for len(pending) > 0 && ctx.Err() == nil && time.Now().Before(deadline) {
		g.pool(ctx, len(pending), func(i int) {
			b := pending[i]
			token, _ := g.tokens.buyer(b.uid)
			var e apiclient.Entry
			code := g.retrying(ctx, rec, readRetries, func() (string, time.Duration) {
				var m apiclient.Meta
				e, m, _ = g.c.Entry(ctx, token, g.r.ActivityID)
				return m.Code, m.Took
			})
			if code != CodeOK || (e.Status != "won" && e.Status != "lost") {
				return
			}
			b.mu.Lock()
			b.outcome = e.Status
			if e.Status == "won" {
				b.order(e.OrderNo)
			}
			b.mu.Unlock()
		})
		next := pending[:0]
		for _, b := range pending {
			if b.outcome == "" {
				next = append(next, b)
			}
		}
		pending = next
		sale.DrawWait = time.Since(drawAt)
		if len(pending) > 0 {
			sleep(ctx, 250*time.Millisecond)
		}
	}
	sale.Polls = opsOf(rec)
	sale.Unknown = len(pending)
}

// verifyDraw reads every order back as its buyer, waits for reconciliation, reads both books
// and the draw's view, and turns them into the sale's fairness and checks.
func (g *run) verifyDraw(ctx context.Context, sale *DrawSale, buyers []*drawBuyer) {
	q := g.cfg.Quantity
	var outs []Outcome
	var orders []*held
	winners, lateOrders := 0, 0
	for _, b := range buyers {
		entrant := b.entry != "" || (sale.DrawSeconds == 0 && b.rank > 0)
		won := len(b.orders) > 0
		if sale.DrawSeconds > 0 {
			won = b.outcome == "won"
		}
		switch {
		case entrant:
			outs = append(outs, Outcome{Rank: int(b.rank), Heavy: b.heavy, Won: won})
			if won {
				winners++
			}
		case sale.DrawSeconds > 0 && b.last != "":
			sale.Late[b.last]++ // answered after the window: no entry
			lateOrders += len(b.orders)
		default:
			sale.Errors[b.last]++
		}
		if len(b.orders) > 1 {
			sale.TwoOrders++
		}
		token, _ := g.tokens.buyer(b.uid)
		for no := range b.orders {
			orders = append(orders, &held{orderNo: no, token: token})
		}
	}
	sale.Fairness = ComputeFairness(outs)
	reads := newRecorder(time.Now())
	g.readOrders(ctx, orders, reads)
	sale.OrderStatuses = map[string]int{}
	for _, h := range orders {
		sale.OrderStatuses[h.status]++
	}
	g.reconcile(ctx)
	err := g.final(ctx)
	if a, aerr := g.c.Admin(ctx, g.merchant, g.r.ActivityID); aerr == nil {
		sale.Draw = a.Draw
	}
	r := g.r
	sale.Reconcile, sale.ReconcileDiffs = r.Reconcile, r.ReconcileDiffs
	sale.FinalRedis, sale.FinalDB = r.FinalRedis, r.FinalDB

	entrants := len(outs)
	want := min(int(sale.Stock/q), entrants)
	sale.check("winners = min(stock, entrants)", winners == want, "%d winners of %d entrants, %d units of stock",
		winners, entrants, sale.Stock)
	if sale.DrawSeconds > 0 {
		sale.check("every entrant learnt won or lost", sale.Unknown == 0, "%d of %d still unknown after %s",
			sale.Unknown, entrants, sale.DrawWait.Round(time.Millisecond))
		dv := sale.Draw
		sale.check("the draw's view agrees", dv != nil && dv.Status == "done" && dv.Winners == int64(winners) &&
			dv.Entries == int64(entrants), "view %+v; counted %d entrants, %d winners", dv, entrants, winners)
	}
	heldQty := int64(len(orders)) * q
	sale.check("no oversell", heldQty <= sale.Stock, "%d units in orders of %d", heldQty, sale.Stock)
	books := err == nil && sale.FinalRedis != nil && sale.FinalRedis.Locked == heldQty && sale.FinalDB.Locked == heldQty &&
		sale.FinalRedis.Sold == 0 && sale.FinalDB.Sold == 0
	sale.check("no entrant with two orders", sale.TwoOrders == 0 && sale.OrderStatuses["reserved"] == len(orders) &&
		len(orders) == winners+lateOrders && books,
		"%d buyers answered with two orders; %d orders (%d winners, %d after the window) read back %s; "+
			"locked redis %v mysql %d, want %d", sale.TwoOrders, len(orders), winners, lateOrders,
		FormatCounts(sale.OrderStatuses), lockedOf(sale.FinalRedis), sale.FinalDB.Locked, heldQty)
	sale.check("reconciliation consistent", r.Reconcile == "consistent", "%s after %s", r.Reconcile,
		r.ReconcileWait.Round(time.Millisecond))
	sale.check("redis and mysql agree", sale.FinalRedis != nil && *sale.FinalRedis == sale.FinalDB,
		"redis %+v, mysql %+v", sale.FinalRedis, sale.FinalDB)
}

func lockedOf(b *Books) any {
	if b == nil {
		return "not warm"
	}
	return b.Locked
}
