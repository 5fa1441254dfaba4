package loadgen

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/internal/authtoken"
)

func redisBooks(b *apiclient.RedisBook) *Books {
	if b == nil {
		return nil
	}
	return &Books{Remaining: b.Remaining, Locked: b.Locked, Sold: b.Sold}
}

func dbBooks(b apiclient.DBBook) Books {
	return Books{Remaining: b.Available, Locked: b.Locked, Sold: b.Sold}
}

// held is a reservation the run obtained.
type held struct {
	orderNo  string
	token    string // its buyer's
	amount   int64  // quantity x price, as the reservation answered it
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
	c        *apiclient.Client
	merchant string
	tokens   *buyerTokens
	id       string // distinguishes this run's request_ids
	r        *Report
	prog     *progress
	cost     *coster // nil unless Config.Cost asks
}

// Run simulates one sale and returns its report. An error means the sale could not be
// set up or was interrupted; a sale that ran but failed a check returns a Report whose
// OK() is false.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	g, err := newRun(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer g.c.Close()
	defer g.cost.close()
	if err := g.setup(ctx); err != nil {
		return nil, err
	}
	if err := g.cost.before(ctx); err != nil {
		return nil, err
	}
	orders := g.reserve(ctx)
	g.measureCost(ctx)
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

// newRun checks cfg (after its defaults) and the target, and makes the run's client and
// tokens; the caller closes g.c.
func newRun(ctx context.Context, cfg Config) (*run, error) {
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
		c:   newClient(cfg.BaseURL, cfg.conns(), cfg.Timeout, pinned),
		id:  hex.EncodeToString(idb[:]),
		r: &Report{Target: cfg.BaseURL, Started: time.Now(), Buyers: cfg.Buyers, Concurrency: cfg.Concurrency,
			Quantity: cfg.Quantity, Errors: map[string]int{}, Rate: cfg.Rate, MaxInFlight: cfg.openCap()},
		prog: newProgress(cfg.Progress),
		cost: newCoster(cfg.Cost, cfg.Buyers),
	}
	g.merchant = cfg.MerchantToken
	if g.merchant == "" {
		if g.merchant, err = authtoken.Merchant(cfg.MerchantSecret, cfg.MerchantID, 24*time.Hour); err != nil {
			g.c.Close()
			return nil, err
		}
	}
	if g.tokens, err = newBuyerTokens(cfg.BuyerSecret, BuyerTokenTTL, cfg.UIDBase+1); err != nil {
		g.c.Close()
		return nil, err
	}
	return g, nil
}

// setup creates (or finds) the activity and warms it up.
func (g *run) setup(ctx context.Context) error {
	cfg := g.cfg
	if cfg.ActivityID == 0 {
		now := time.Now().Unix()
		// Long enough for every phase; keys live on past the end anyway (grace).
		end := now + int64((time.Hour + cfg.MaxDuration + cfg.PayTimeout + cfg.ExpiryGrace + cfg.ReconcileWait).Seconds())
		a, err := g.c.Create(ctx, g.merchant, apiclient.NewActivity{
			SkuID: cfg.SkuID, Name: "loadgen " + g.id, Stock: cfg.Stock, StartTime: now - 1, EndTime: end,
			PerUserLimit: cfg.PerUserLimit, PayTimeoutSeconds: int64(cfg.PayTimeout / time.Second),
			Price: cfg.Price,
		})
		if err != nil {
			return fmt.Errorf("create activity: %w", err)
		}
		g.r.ActivityID, g.r.Created = a.ActivityID, true
	} else {
		g.r.ActivityID = cfg.ActivityID
	}
	g.prog.phase("activity %d: warming up", g.r.ActivityID)
	if _, err := g.c.Warmup(ctx, g.merchant, g.r.ActivityID); err != nil {
		return fmt.Errorf("warm up: %w", err)
	}
	a, err := g.c.Admin(ctx, g.merchant, g.r.ActivityID)
	if err != nil {
		return fmt.Errorf("read activity: %w", err)
	}
	if a.Redis == nil {
		return fmt.Errorf("activity %d is not warm after warm-up", g.r.ActivityID)
	}
	g.r.StockAtStart, g.r.LockedAtStart, g.r.PayTimeout = a.Redis.Remaining, a.Redis.Locked, a.PayTimeoutSeconds
	return nil
}

// reserve runs the buyers and returns the reservations obtained.
func (g *run) reserve(ctx context.Context) []*held {
	cfg := g.cfg
	start := time.Now()
	rec := newRecorder(start)
	var (
		mu     sync.Mutex
		orders []*held
	)
	g.prog.startBar("reserve", cfg.Buyers)
	lat, codes, timeline := g.drive(ctx, start, rec, func(i int) string {
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
		if g.cost.counted() {
			mu.Lock()
			reserved := g.r.Reserved
			mu.Unlock()
			g.cost.checkpoint(ctx, reserved)
		}
		return code
	})
	g.r.ReserveDuration = time.Since(start)
	g.prog.endBar()
	g.cost.reserveEnded()

	for _, n := range codes {
		g.r.Requests += n
	}
	g.r.Attempts = codes
	g.r.Timeline = timeline
	if g.r.ReserveDuration > 0 {
		g.r.Throughput = float64(g.r.Requests) / g.r.ReserveDuration.Seconds()
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

// drive runs one(i) for every buyer: closed loop on Concurrency workers (the latencies are
// rec's, every attempt's from its sending), or with Rate open loop (Open: the latencies are
// each buyer's, from its scheduled time to its last answer, and the timeline counts buyers).
// It sets NotSent (and Late) and returns the latencies, every attempt's code and the timeline.
func (g *run) drive(ctx context.Context, start time.Time, rec *recorder, one func(i int) string) (
	*LatencyHist, map[string]int, []Second) {
	cfg := g.cfg
	if cfg.Rate > 0 {
		st := Open{N: cfg.Buyers, Rate: cfg.Rate, MaxInFlight: cfg.MaxInFlight, Start: start,
			Deadline: start.Add(cfg.MaxDuration)}.Run(ctx, one)
		for range st.Dropped {
			g.prog.buyerDone("")
		}
		g.r.NotSent, g.r.Late = st.Dropped, st.Late
		_, codes, _ := rec.snapshot()
		return st.Latency, codes, st.Timeline
	}
	var notSent atomic.Int64
	Drive{N: cfg.Buyers, Workers: cfg.Concurrency, Deadline: start.Add(cfg.MaxDuration)}.Run(ctx,
		func(i int) { one(i) },
		func(int) {
			notSent.Add(1)
			g.prog.buyerDone("")
		})
	g.r.NotSent = int(notSent.Load())
	lat, codes, timeline := rec.snapshot()
	return lat, codes, timeline
}

// buyer is simulated user i's reservation, retried on BUSY / RATE_LIMITED / transport
// failure with the same request_id.
func (g *run) buyer(ctx context.Context, rec *recorder, i int) (*held, string) {
	uid := g.cfg.UIDBase + int64(i) + 1
	token, err := g.tokens.buyer(uid)
	if err != nil {
		return nil, "TOKEN_ERROR"
	}
	body := apiclient.ReserveBody(g.r.ActivityID, g.cfg.Quantity, "lg-"+g.id+"-"+strconv.Itoa(i))
	var resp apiclient.Reservation
	code := g.withRetries(ctx, rec, func() (string, time.Duration) {
		var m apiclient.Meta
		resp, m, _ = g.c.Reserve(ctx, token, body)
		g.prog.attempt()
		return m.Code, m.Took
	})
	if code != CodeOK {
		return nil, code
	}
	return &held{orderNo: resp.OrderNo, token: token, amount: resp.Amount, expireAt: resp.ExpireAt,
		status: "reserved"}, code
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
func (g *run) retrying(ctx context.Context, rec *recorder, retries int,
	call func() (code string, took time.Duration)) string {
	for attempt := 0; ; attempt++ {
		code, took := call()
		rec.add(time.Now(), took, code)
		if code == CodeOK || !retryable(code) || attempt >= retries || ctx.Err() != nil {
			return code
		}
		sleep(ctx, time.Duration(attempt+1)*20*time.Millisecond+time.Duration(mrand.IntN(20))*time.Millisecond)
	}
}

// pool runs fn(0..n-1) on Concurrency goroutines, stopping once ctx is done.
func (g *run) pool(ctx context.Context, n int, fn func(i int)) {
	Drive{N: n, Workers: g.cfg.Concurrency}.Run(ctx, fn, nil)
}
