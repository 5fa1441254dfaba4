package faults

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/devkit/loadgen"
	"github.com/seckill/seckill/internal/authtoken"
)

// client speaks the HTTP API (docs/API.md) the way a buyer's app does, counting the HTTP
// statuses it was answered.
type client struct {
	*apiclient.Client

	mu       sync.Mutex
	statuses map[int]int // every answer's HTTP status (0: none came), by status
}

func newClient(base string) *client { return newClientDial(base, nil) }

// newClientDial is newClient with its connections made by dial (nil: to base's address).
func newClientDial(base string, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *client {
	c := &client{statuses: map[int]int{}}
	c.Client = apiclient.New(base, apiclient.Options{Conns: 128, Timeout: 5 * time.Second, Dial: dial,
		OnStatus: func(st int) {
			c.mu.Lock()
			c.statuses[st]++
			c.mu.Unlock()
		}})
	return c
}

// reserve is a send of retry: buyer token's reservation of one unit of aid under req,
// its answer decoded into out.
func (c *client) reserve(ctx context.Context, token string, aid int64, req string,
	out *apiclient.Reservation) func() (string, error) {
	body := apiclient.ReserveBody(aid, 1, req)
	return func() (string, error) {
		r, m, err := c.Reserve(ctx, token, body)
		if err == nil {
			*out = r
		}
		return m.Code, err
	}
}

// retryable: the answers a client retries with the same request (API.md: a request_id
// makes a reservation safe to repeat; pay and cancel are idempotent). INTERNAL is among
// them: the request may or may not have happened, and only a retry finds out.
func retryable(code string) bool {
	switch code {
	case apiclient.CodeTransport, apiclient.CodeBusy, apiclient.CodeRateLimited, apiclient.CodeInternal,
		"HTTP_500", "HTTP_502", "HTTP_503", "HTTP_504":
		return true
	}
	return false
}

// Burst is one sale's buyers.
type Burst struct {
	Buyers     int           // each reserves once (one request_id, retried until answered)
	Stock      int64         // the activity's stock (fewer units than buyers: it sells out)
	Limit      int64         // per-user limit
	Arrive     time.Duration // buyers arrive evenly over this window
	PayTimeout int64         // seconds
	Pay        float64       // of the reservations, paid
	Cancel     float64       // of the reservations, cancelled (the rest left reserved or to expire)
	SecondTry  float64       // of the buyers who reserved, try once more with a new request_id
	// PayNearExpiry sends each pay around the order's expire_at (between 1.5 s before
	// and 0.7 s after), racing the expiry job.
	PayNearExpiry bool
	// PaymentSecret, when set, is the payment provider's: orders are paid by its signed
	// notification (POST /v1/payments/notify, trade number "t" + the order number), as
	// deploy/'s Pay.BuyerConfirms false requires, instead of the buyer's own pay.
	PaymentSecret []byte
	// DrawSeconds > 0: the activity opens with a draw of that window (draw.go); the buyers
	// enter in it and poll for the outcome.
	DrawSeconds int64
	// Failover, when set, is a load balancer in front of the gateways: a buyer's connection
	// that its gateway refuses goes to the next one (failoverDial); it counts those moved.
	Failover *atomic.Int64
}

type buyerKey struct {
	uid int64
	req string
}

// tally is what the buyers were told.
type tally struct {
	mu         sync.Mutex
	reserved   map[buyerKey]string // first 200's order_no per (uid, request_id)
	refused    map[buyerKey]string // a final non-200 answer (SOLD_OUT, LIMIT_EXCEEDED…) per (uid, request_id)
	twoAnswers int                 // a (uid, request_id) answered with two different order_nos
	paid       map[string]bool     // pay answered 200
	payClosed  map[string]bool     // pay answered ORDER_CLOSED
	cancelled  map[string]bool     // cancel answered 200
	codes      map[string]int      // every non-200 answer, by code
	unanswered int                 // requests still failing when the row's deadline came
	// busyFirst and busyLast are when the first and the last BUSY answer came.
	busyFirst, busyLast time.Time
	// The draw's rows: the entries acknowledged (202), by buyer, and the buyers a further
	// reservation answered with another request id than their entry's.
	entries    map[int64]apiclient.Reservation
	twoEntries int
	notEntered int                 // reservations answered 200 in the window, not 202
	wonAt      map[int64]time.Time // when an entrant's replay was first answered 200
}

func newTally() *tally {
	return &tally{reserved: map[buyerKey]string{}, refused: map[buyerKey]string{}, paid: map[string]bool{},
		payClosed: map[string]bool{},
		cancelled: map[string]bool{}, codes: map[string]int{}, entries: map[int64]apiclient.Reservation{},
		wonAt: map[int64]time.Time{}}
}

func (t *tally) code(c string) {
	t.mu.Lock()
	t.codes[c]++
	if c == apiclient.CodeBusy {
		if t.busyFirst.IsZero() {
			t.busyFirst = time.Now()
		}
		t.busyLast = time.Now()
	}
	t.mu.Unlock()
}

// buyers runs the burst against activity aid, buyer i through cs[i mod len(cs)], and
// returns when every buyer is done or deadline passed.
func buyers(ctx context.Context, cs []*client, secret string, aid int64, b Burst, runID string, uidBase int64,
	deadline time.Time, t *tally) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	// Every buyer on a goroutine of its own, arriving on schedule.
	d := loadgen.Drive{N: b.Buyers, Workers: b.Buyers, Start: time.Now(), Spread: b.Arrive}
	d.Run(ctx, func(i int) {
		c, uid, req := cs[i%len(cs)], uidBase+int64(i)+1, fmt.Sprintf("%s-%d", runID, i)
		if b.DrawSeconds > 0 {
			drawBuyer(ctx, c, secret, aid, b, uid, req, t)
			return
		}
		buyer(ctx, c, secret, aid, b, uid, req, t)
	}, nil)
}

func buyer(ctx context.Context, c *client, secret string, aid int64, b Burst, uid int64, req string, t *tally) {
	token, err := authtoken.Buyer(secret, uid, time.Hour)
	if err != nil {
		t.code("TOKEN")
		return
	}
	rnd := mrand.New(mrand.NewPCG(uint64(uid), 7))
	reserve := func(req string) (apiclient.Reservation, bool) {
		var r apiclient.Reservation
		ok, code := retry(ctx, t, c.reserve(ctx, token, aid, req, &r))
		if !ok && !retryable(code) { // a final no: this request must hold no order
			t.mu.Lock()
			t.refused[buyerKey{uid, req}] = code
			t.mu.Unlock()
		}
		if ok {
			t.mu.Lock()
			k := buyerKey{uid, req}
			if prev, seen := t.reserved[k]; seen && prev != r.OrderNo {
				t.twoAnswers++
			} else if !seen {
				t.reserved[k] = r.OrderNo
			}
			t.mu.Unlock()
		}
		return r, ok
	}
	r, ok := reserve(req + "-a")
	if !ok {
		return
	}
	if rnd.Float64() < b.SecondTry {
		reserve(req + "-b") // the per-user limit must refuse it
	}
	settle(ctx, c, token, b, rnd, r, t)
}

// settle pays, cancels or leaves the order r, by b's shares.
func settle(ctx context.Context, c *client, token string, b Burst, rnd *mrand.Rand, r apiclient.Reservation,
	t *tally) {
	switch x := rnd.Float64(); {
	case x < b.Pay:
		if b.PayNearExpiry {
			at := time.UnixMilli(r.ExpireAt*1000 - 1500 + rnd.Int64N(2200))
			select {
			case <-time.After(time.Until(at)):
			case <-ctx.Done():
				return
			}
		}
		ok, code := retry(ctx, t, func() (string, error) {
			if len(b.PaymentSecret) > 0 {
				_, m, err := c.Notify(ctx, b.PaymentSecret, r.OrderNo, r.Amount, "t"+r.OrderNo)
				return m.Code, err
			}
			_, m, err := c.Pay(ctx, token, r.OrderNo)
			return m.Code, err
		})
		t.mu.Lock()
		if ok {
			t.paid[r.OrderNo] = true
		} else if code == apiclient.CodeOrderClosed {
			t.payClosed[r.OrderNo] = true
		}
		t.mu.Unlock()
	case x < b.Pay+b.Cancel:
		if ok, _ := retry(ctx, t, func() (string, error) {
			_, m, err := c.Cancel(ctx, token, r.OrderNo)
			return m.Code, err
		}); ok {
			t.mu.Lock()
			t.cancelled[r.OrderNo] = true
			t.mu.Unlock()
		}
	}
}

// retry sends until a 200 (true), a final answer (false and its code) or the deadline
// (false, counted as unanswered), backing off 50 ms doubling to 1 s.
func retry(ctx context.Context, t *tally, send func() (string, error)) (bool, string) {
	wait := 50 * time.Millisecond
	for {
		code, _ := send()
		if code == apiclient.CodeOK {
			return true, code
		}
		t.code(code)
		if !retryable(code) {
			return false, code
		}
		select {
		case <-ctx.Done():
			t.mu.Lock()
			t.unanswered++
			t.mu.Unlock()
			return false, code
		case <-time.After(wait + time.Duration(mrand.Int64N(int64(wait)))):
		}
		if wait *= 2; wait > time.Second {
			wait = time.Second
		}
	}
}

// unexpectedStatuses lists the HTTP statuses the clients saw outside allowed ("": none).
func unexpectedStatuses(cs []*client, allowed []int) string {
	var bad []string
	for _, c := range cs {
		c.mu.Lock()
		for st, n := range c.statuses {
			if !slices.Contains(allowed, st) {
				bad = append(bad, fmt.Sprintf("%d x%d (%s)", st, n, c.Base()))
			}
		}
		c.mu.Unlock()
	}
	return strings.Join(bad, ", ")
}
