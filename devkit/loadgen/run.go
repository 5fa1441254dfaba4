package loadgen

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seckill/seckill/internal/authtoken"
)

// API shapes (docs/API.md), as a client sees them.
type (
	redisBook struct {
		Remaining int64 `json:"remaining"`
		Locked    int64 `json:"locked"`
		Sold      int64 `json:"sold"`
	}
	dbBook struct {
		Available int64 `json:"available"`
		Locked    int64 `json:"locked"`
		Sold      int64 `json:"sold"`
	}
	activityResp struct {
		ActivityID        int64      `json:"activity_id"`
		Stock             int64      `json:"stock"`
		EndTime           int64      `json:"end_time"`
		PerUserLimit      int64      `json:"per_user_limit"`
		PayTimeoutSeconds int64      `json:"pay_timeout_seconds"`
		Redis             *redisBook `json:"redis"`
		DB                dbBook     `json:"db"`
		Draw              *drawView  `json:"draw"` // an activity with an opening draw

	}
	warmupResp struct {
		Warmed    bool  `json:"warmed"`
		Remaining int64 `json:"remaining"`
	}
	reserveResp struct {
		OrderNo  string `json:"order_no"`
		Status   string `json:"status"`
		ExpireAt int64  `json:"expire_at"`
	}
	orderResp struct {
		OrderNo string `json:"order_no"`
		Status  string `json:"status"`
	}
	reconcileResp struct {
		Status string   `json:"status"`
		Diffs  []string `json:"diffs"`
	}
)

func (b *redisBook) books() *Books {
	if b == nil {
		return nil
	}
	return &Books{Remaining: b.Remaining, Locked: b.Locked, Sold: b.Sold}
}

func (b dbBook) books() Books { return Books{Remaining: b.Available, Locked: b.Locked, Sold: b.Sold} }

// held is a reservation the run obtained.
type held struct {
	orderNo  string
	token    string // its buyer's
	expireAt int64
	status   string // as last known
	// unsure: the settle op ("paid" or "cancelled") whose last answer was BUSY or no
	// answer after every retry; it may have taken effect (API.md: BUSY means "retry with
	// the same request_id", not "nothing happened"). The read-back decides.
	unsure string
}

// run is the state of one Run.
type run struct {
	cfg      Config
	c        *client
	merchant string
	tokens   *buyerTokens
	id       string // distinguishes this run's request_ids
	r        *Report
	prog     *progress
}

// Run simulates one sale and returns its report. An error means the sale could not be
// set up or was interrupted; a sale that ran but failed a check returns a Report whose
// OK() is false.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pinned, err := checkTarget(ctx, cfg.BaseURL, cfg.AllowRemote)
	if err != nil {
		return nil, err
	}
	var idb [4]byte
	_, _ = rand.Read(idb[:])
	g := &run{
		cfg: cfg,
		c:   newClient(cfg.BaseURL, cfg.Concurrency, cfg.Timeout, pinned),
		id:  hex.EncodeToString(idb[:]),
		r: &Report{Target: cfg.BaseURL, Started: time.Now(), Buyers: cfg.Buyers, Concurrency: cfg.Concurrency,
			Quantity: cfg.Quantity, Errors: map[string]int{}},
		prog: newProgress(cfg.Progress),
	}
	defer g.c.close()
	g.merchant = cfg.MerchantToken
	if g.merchant == "" {
		var err error
		if g.merchant, err = authtoken.Merchant(cfg.MerchantSecret, cfg.MerchantID, 24*time.Hour); err != nil {
			return nil, err
		}
	}
	if g.tokens, err = newBuyerTokens(cfg.BuyerSecret, 24*time.Hour, cfg.UIDBase+1); err != nil {
		return nil, err
	}
	if err := g.setup(ctx); err != nil {
		return nil, err
	}
	orders := g.reserve(ctx)
	g.settle(ctx, orders)
	g.awaitExpiry(ctx, orders)
	g.readBack(ctx, orders)
	g.reconcile(ctx)
	if err := g.final(ctx); err != nil {
		return g.r, err
	}
	g.verify()
	return g.r, ctx.Err()
}

// setup creates (or finds) the activity and warms it up.
func (g *run) setup(ctx context.Context) error {
	cfg := g.cfg
	if cfg.ActivityID == 0 {
		now := time.Now().Unix()
		// Long enough for every phase; keys live on past the end anyway (grace).
		end := now + int64((time.Hour + cfg.MaxDuration + cfg.PayTimeout + cfg.ExpiryGrace + cfg.ReconcileWait).Seconds())
		body := map[string]any{
			"sku_id": cfg.SkuID, "name": "loadgen " + g.id, "stock": cfg.Stock,
			"start_time": now - 1, "end_time": end,
			"per_user_limit": cfg.PerUserLimit, "pay_timeout_seconds": int64(cfg.PayTimeout / time.Second),
		}
		var a activityResp
		if _, _, err := g.c.call(ctx, "POST", "/v1/admin/activities", g.merchant, body, &a); err != nil {
			return fmt.Errorf("create activity: %w", err)
		}
		g.r.ActivityID, g.r.Created = a.ActivityID, true
	} else {
		g.r.ActivityID = cfg.ActivityID
	}
	g.prog.phase("activity %d: warming up", g.r.ActivityID)
	var w warmupResp
	if _, _, err := g.c.call(ctx, "POST", g.adminPath("warmup"), g.merchant, nil, &w); err != nil {
		return fmt.Errorf("warm up: %w", err)
	}
	var a activityResp
	if _, _, err := g.c.call(ctx, "GET", g.adminPath(""), g.merchant, nil, &a); err != nil {
		return fmt.Errorf("read activity: %w", err)
	}
	if a.Redis == nil {
		return fmt.Errorf("activity %d is not warm after warm-up", g.r.ActivityID)
	}
	g.r.StockAtStart, g.r.LockedAtStart, g.r.PayTimeout = a.Redis.Remaining, a.Redis.Locked, a.PayTimeoutSeconds
	return nil
}

// adminPath is /v1/admin/activities/{id}, followed by /suffix unless suffix is "".
func (g *run) adminPath(suffix string) string {
	p := fmt.Sprintf("/v1/admin/activities/%d", g.r.ActivityID)
	if suffix != "" {
		p += "/" + suffix
	}
	return p
}

// reserve runs the buyers and returns the reservations obtained.
func (g *run) reserve(ctx context.Context) []*held {
	cfg := g.cfg
	start := time.Now()
	rec := newRecorder(start)
	deadline := start.Add(cfg.MaxDuration)
	var (
		next    atomic.Int64
		notSent atomic.Int64
		mu      sync.Mutex
		orders  []*held
		wg      sync.WaitGroup
	)
	g.prog.startBar("reserve", cfg.Buyers)
	for w := 0; w < cfg.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= cfg.Buyers {
					return
				}
				if ctx.Err() != nil || time.Now().After(deadline) {
					notSent.Add(1)
					g.prog.buyerDone("")
					continue
				}
				h, code := g.buyer(ctx, rec, i)
				mu.Lock()
				switch code {
				case CodeOK:
					orders = append(orders, h)
					g.r.Reserved++
				case CodeSoldOut:
					g.r.SoldOut++
				default:
					g.r.Errors[code]++
				}
				mu.Unlock()
				g.prog.buyerDone(code)
			}
		}()
	}
	wg.Wait()
	g.r.ReserveDuration = time.Since(start)
	g.prog.endBar()

	lat, codes, timeline := rec.snapshot()
	g.r.Requests = lat.Count()
	g.r.NotSent = int(notSent.Load())
	g.r.Attempts = codes
	g.r.Timeline = timeline
	if g.r.ReserveDuration > 0 {
		g.r.Throughput = float64(lat.Count()) / g.r.ReserveDuration.Seconds()
	}
	g.r.Histogram = lat.Buckets(40)
	g.r.Latency = lat.Summary()
	for i, h := range orders {
		if i == 0 || h.expireAt < g.r.EarliestExpire {
			g.r.EarliestExpire = h.expireAt
		}
		g.r.LatestExpire = max(g.r.LatestExpire, h.expireAt)
	}
	return orders
}

// buyer is simulated user i's reservation, retried on BUSY / RATE_LIMITED / transport
// failure with the same request_id.
func (g *run) buyer(ctx context.Context, rec *recorder, i int) (*held, string) {
	uid := g.cfg.UIDBase + int64(i) + 1
	token, err := g.tokens.buyer(uid)
	if err != nil {
		return nil, "TOKEN_ERROR"
	}
	body := reserveBody(g.r.ActivityID, g.cfg.Quantity, "lg-"+g.id+"-"+strconv.Itoa(i))
	var resp reserveResp
	code := g.withRetries(ctx, rec, func() (string, time.Duration) {
		resp = reserveResp{}
		code, took, _ := g.c.call(ctx, "POST", "/v1/seckill/orders", token, body, &resp)
		g.prog.attempt()
		return code, took
	})
	if code != CodeOK {
		return nil, code
	}
	return &held{orderNo: resp.OrderNo, token: token, expireAt: resp.ExpireAt, status: "reserved"}, code
}

// reserveBody is the JSON of a reservation, as encoding/json writes the map
// {activity_id, quantity, request_id} (request ids are the run's own: no escaping needed).
func reserveBody(aid, qty int64, requestID string) []byte {
	b := make([]byte, 0, 96)
	b = append(b, `{"activity_id":`...)
	b = strconv.AppendInt(b, aid, 10)
	b = append(b, `,"quantity":`...)
	b = strconv.AppendInt(b, qty, 10)
	b = append(b, `,"request_id":"`...)
	b = append(b, requestID...)
	return append(b, `"}`...)
}

// withRetries makes a call, recorded in rec, and retries it on BUSY / RATE_LIMITED /
// transport failure (the same request: API.md says it is safe) up to cfg.Retries times
// with a growing, jittered pause; it returns the last answer's code.
func (g *run) withRetries(ctx context.Context, rec *recorder, call func() (code string, took time.Duration)) string {
	return g.retrying(ctx, rec, g.cfg.Retries, call)
}

// readRetries bounds the retries of an order read (about 2.5 s of pauses): a read
// changes nothing, and the checks need every order's state even while go-zero's shedder
// (pro mode) answers a read-back of thousands of orders with 503s.
const readRetries = 15

// retrying is withRetries with its own bound.
func (g *run) retrying(ctx context.Context, rec *recorder, retries int, call func() (code string, took time.Duration)) string {
	for attempt := 0; ; attempt++ {
		code, took := call()
		rec.add(time.Now(), took, code)
		if code == CodeOK || !retryable(code) || attempt >= retries || ctx.Err() != nil {
			return code
		}
		sleep(ctx, time.Duration(attempt+1)*20*time.Millisecond+time.Duration(mrand.IntN(20))*time.Millisecond)
	}
}

// settle pays and cancels the chosen fractions of the reservations.
func (g *run) settle(ctx context.Context, orders []*held) {
	n := len(orders)
	rng := mrand.New(mrand.NewPCG(g.cfg.Seed, g.cfg.Seed^0x9e3779b97f4a7c15))
	shuffled := append([]*held(nil), orders...)
	rng.Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	nPay := int(math.Round(g.cfg.PayFraction * float64(n)))
	nCancel := min(int(math.Round(g.cfg.CancelFraction*float64(n))), n-nPay)
	g.prog.phase("settle: paying %d, cancelling %d, leaving %d to expire", nPay, nCancel, n-nPay-nCancel)
	payRec, cancelRec := newRecorder(time.Now()), newRecorder(time.Now())
	g.pool(ctx, nPay+nCancel, func(i int) {
		h, op, rec, status := shuffled[i], "pay", payRec, "paid"
		if i >= nPay {
			op, rec, status = "cancel", cancelRec, "cancelled"
		}
		// Retried like a reservation: pay and cancel are idempotent.
		code := g.withRetries(ctx, rec, func() (string, time.Duration) {
			var resp orderResp
			code, took, _ := g.c.call(ctx, "POST", "/v1/seckill/orders/"+url.PathEscape(h.orderNo)+"/"+op, h.token, nil, &resp)
			return code, took
		})
		switch {
		case code == CodeOK:
			h.status = status
		case retryable(code): // left BUSY or unanswered: it may have taken effect
			h.unsure = status
		}
	})
	g.r.Pay, g.r.Cancel = opsOf(payRec), opsOf(cancelRec)
}

// awaitExpiry waits, bounded, until none of the run's orders is still reserved.
func (g *run) awaitExpiry(ctx context.Context, orders []*held) {
	start := time.Now()
	defer func() { g.r.ExpiryWait = time.Since(start) }()
	// API.md: an unpaid order expires within pay_timeout_seconds + 5 s.
	deadline := time.Unix(g.r.LatestExpire, 0).Add(5*time.Second + g.cfg.ExpiryGrace)
	reads := newRecorder(start)
	defer func() { g.r.OrderReads = opsOf(reads) }()
	for {
		var pending []*held
		for _, h := range orders {
			if h.status == "reserved" {
				pending = append(pending, h)
			}
		}
		if len(pending) == 0 || ctx.Err() != nil || time.Now().After(deadline) {
			return
		}
		if wait := time.Until(time.Unix(g.r.LatestExpire, 0)); wait > 0 {
			g.prog.phase("expire: waiting %s for %d unpaid orders to pass their pay timeout", wait.Round(time.Second), len(pending))
			sleep(ctx, wait)
			continue
		}
		g.readOrders(ctx, pending, reads)
		sleep(ctx, 500*time.Millisecond)
	}
}

// readBack reads every reservation's final status.
func (g *run) readBack(ctx context.Context, orders []*held) {
	reads := newRecorder(time.Now())
	g.readOrders(ctx, orders, reads)
	ops := opsOf(reads)
	g.r.OrderReads.Requests += ops.Requests
	g.r.OrderReads.OK += ops.OK
	if g.r.OrderReads.Codes == nil {
		g.r.OrderReads.Codes = map[string]int{}
	}
	for k, v := range ops.Codes {
		g.r.OrderReads.Codes[k] += v
	}
	g.r.FinalStatuses = map[string]int{}
	g.r.Unsure = map[string]int{}
	for _, h := range orders {
		g.r.FinalStatuses[h.status]++
		if h.unsure == "" {
			continue
		}
		switch h.status {
		case h.unsure: // it took effect
			g.r.Unsure[h.unsure+": took effect"]++
		case "expired":
			g.r.Unsure[h.unsure+": did not"]++
		default:
			g.r.Unsure[h.unsure+": became "+h.status]++ // neither: a wrong state (verify fails)
		}
	}
}

// readOrders GETs each order as its buyer, retried on BUSY up to readRetries times, and
// records its status (or READ_<code>).
func (g *run) readOrders(ctx context.Context, orders []*held, rec *recorder) {
	g.pool(ctx, len(orders), func(i int) {
		h := orders[i]
		var resp orderResp
		code := g.retrying(ctx, rec, max(g.cfg.Retries, readRetries), func() (string, time.Duration) {
			resp = orderResp{}
			code, took, _ := g.c.call(ctx, "GET", "/v1/seckill/orders/"+url.PathEscape(h.orderNo), h.token, nil, &resp)
			return code, took
		})
		if code == CodeOK {
			h.status = resp.Status
		} else {
			h.status = "READ_" + code
		}
	})
}

// reconcile polls reconciliation until it reports consistent, bounded by ReconcileWait.
func (g *run) reconcile(ctx context.Context) {
	start := time.Now()
	g.prog.phase("reconcile: waiting for status consistent (up to %s)", g.cfg.ReconcileWait)
	for {
		var rr reconcileResp
		code, _, err := g.c.call(ctx, "GET", g.adminPath("reconcile"), g.merchant, nil, &rr)
		if code == CodeOK {
			g.r.Reconcile, g.r.ReconcileDiffs = rr.Status, rr.Diffs
		} else {
			g.r.Reconcile, g.r.ReconcileDiffs = "error "+code, []string{err.Error()}
		}
		g.r.ReconcileWait = time.Since(start)
		if g.r.Reconcile == "consistent" || ctx.Err() != nil || g.r.ReconcileWait >= g.cfg.ReconcileWait {
			return
		}
		sleep(ctx, 500*time.Millisecond)
	}
}

// final reads both books.
func (g *run) final(ctx context.Context) error {
	var a activityResp
	if _, _, err := g.c.call(ctx, "GET", g.adminPath(""), g.merchant, nil, &a); err != nil {
		return fmt.Errorf("read final books: %w", err)
	}
	g.r.FinalRedis, g.r.FinalDB = a.Redis.books(), a.DB.books()
	return nil
}

// verify turns the numbers into checks.
func (g *run) verify() {
	r, q := g.r, g.cfg.Quantity
	paid, cancelled := r.Paid()+r.Unsure["paid: took effect"], r.Cancelled()+r.Unsure["cancelled: took effect"]
	reservedQty, paidQty := int64(r.Reserved)*q, int64(paid)*q
	reserveEnd := r.Started.Add(r.ReserveDuration)
	// Stock could return during the reserve phase only by expiry (the run cancels later) or
	// by other buyers' orders of a reused activity.
	returned := ""
	switch {
	case r.LockedAtStart > 0:
		returned = fmt.Sprintf("%d units held by earlier buyers may have returned during the run", r.LockedAtStart)
	case r.Reserved > 0 && !reserveEnd.Before(time.Unix(r.EarliestExpire, 0)):
		returned = fmt.Sprintf("reservations began expiring (%s) before the reserve phase ended (%s): raise the pay timeout above it",
			time.Unix(r.EarliestExpire, 0).Format(time.TimeOnly), reserveEnd.Format(time.TimeOnly))
	}
	if returned == "" {
		r.check("no oversell: reserved <= stock", reservedQty <= r.StockAtStart, "%d reserved of %d", reservedQty, r.StockAtStart)
	} else {
		r.skip("no oversell: reserved <= stock", "%s", returned)
	}
	r.check("no oversell: paid <= stock", paidQty <= r.StockAtStart, "%d paid of %d", paidQty, r.StockAtStart)

	demand := int64(r.Buyers-r.NotSent) * q
	switch {
	case returned != "":
		r.skip("sold exactly the stock", "%s", returned)
	case len(r.Errors) > 0:
		r.skip("sold exactly the stock", "%d buyers ended with an error, so the front line may rightly undersell", sum(r.Errors))
	case demand < r.StockAtStart:
		r.skip("sold exactly the stock", "demand %d is below the stock %d", demand, r.StockAtStart)
	default:
		r.check("sold exactly the stock", r.StockAtStart-reservedQty < q,
			"%d reserved of %d, %d buyers told SOLD_OUT", reservedQty, r.StockAtStart, r.SoldOut)
	}

	// An op answered OK must have taken effect, an order nobody settled must have expired;
	// an op left unanswered (BUSY after every retry) may have gone either way, never a third.
	want := map[string]int{"paid": paid, "cancelled": cancelled, "expired": r.Reserved - paid - cancelled}
	settled := r.Unsure["paid: became cancelled"]+r.Unsure["cancelled: became paid"]+
		r.Unsure["paid: became reserved"]+r.Unsure["cancelled: became reserved"] == 0
	for status, n := range r.FinalStatuses {
		if n != want[status] {
			settled = false
		}
	}
	for status, n := range want {
		if n != r.FinalStatuses[status] {
			settled = false
		}
	}
	r.check("orders paid, cancelled, expired", settled, "read back %s; expected %s", FormatCounts(r.FinalStatuses), FormatCounts(want))
	r.check("reconciliation consistent", r.Reconcile == "consistent", "%s after %s", r.Reconcile, r.ReconcileWait.Round(time.Millisecond))

	if r.FinalRedis == nil {
		r.skip("redis and mysql agree", "the activity is no longer warm in Redis")
	} else {
		r.check("redis and mysql agree", *r.FinalRedis == r.FinalDB, "redis %+v, mysql %+v", *r.FinalRedis, r.FinalDB)
	}
	if !r.Created {
		r.skip("books add up", "reused activity: other traffic may have moved its books")
	} else if r.FinalRedis != nil {
		want := Books{Remaining: r.StockAtStart - paidQty, Locked: 0, Sold: paidQty}
		r.check("books add up", *r.FinalRedis == want && r.FinalDB == want, "want %+v (stock %d - paid %d)", want, r.StockAtStart, paidQty)
	}
	if n := sum(r.Errors); n > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d buyers ended with an error: %s", n, FormatCounts(r.Errors)))
	}
	if r.NotSent > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d buyers were not sent within %s", r.NotSent, g.cfg.MaxDuration))
	}
}

// pool runs fn(0..n-1) on Concurrency goroutines.
func (g *run) pool(ctx context.Context, n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(g.cfg.Concurrency, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}

func opsOf(rec *recorder) Ops {
	lat, codes, _ := rec.snapshot()
	return Ops{Requests: lat.Count(), OK: codes[CodeOK], Codes: codes, Latency: lat.Summary()}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
