package loadgen

import (
	"context"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"time"

	"github.com/seckill/seckill/devkit/apiclient"
)

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
			var m apiclient.Meta
			if op == "pay" {
				_, m, _ = g.c.Pay(ctx, h.token, h.orderNo)
			} else {
				_, m, _ = g.c.Cancel(ctx, h.token, h.orderNo)
			}
			return m.Code, m.Took
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
			g.prog.phase("expire: waiting %s for %d unpaid orders to pass their pay timeout",
				wait.Round(time.Second), len(pending))
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
		var resp apiclient.Order
		code := g.retrying(ctx, rec, max(g.cfg.Retries, readRetries), func() (string, time.Duration) {
			var m apiclient.Meta
			resp, m, _ = g.c.Order(ctx, h.token, h.orderNo)
			return m.Code, m.Took
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
		rr, err := g.c.Reconcile(ctx, g.merchant, g.r.ActivityID)
		if err == nil {
			g.r.Reconcile, g.r.ReconcileDiffs = rr.Status, rr.Diffs
		} else {
			g.r.Reconcile, g.r.ReconcileDiffs = "error "+apiclient.CodeOf(err), []string{err.Error()}
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
	a, err := asMerchant(ctx, func() (apiclient.Activity, error) {
		return g.c.Admin(ctx, g.merchant, g.r.ActivityID)
	})
	if err != nil {
		return fmt.Errorf("read final books: %w", err)
	}
	g.r.FinalRedis, g.r.FinalDB = redisBooks(a.Redis), dbBooks(a.DB)
	return nil
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
