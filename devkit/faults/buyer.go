package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/seckill/seckill/internal/authtoken"
)

// codeTransport is an attempt that got no HTTP answer (refused, reset, timed out).
const codeTransport = "TRANSPORT"

// codeQueued is a 202: the reservation is an entry of the activity's opening draw.
const codeQueued = "QUEUED"

// client speaks the HTTP API (docs/API.md) the way a buyer's app does.
type client struct {
	base string
	http *http.Client

	mu       sync.Mutex
	statuses map[int]int // every answer's HTTP status (0: none came), by status
}

func newClient(base string) *client {
	tr := &http.Transport{Proxy: nil, MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: 30 * time.Second}
	return &client{base: strings.TrimRight(base, "/"), http: &http.Client{Transport: tr, Timeout: 5 * time.Second},
		statuses: map[int]int{}}
}

// call sends one request; code is "" for a 200 (decoded into out), the API's code word,
// HTTP_<status> for an error body without one, or codeTransport.
func (c *client) call(ctx context.Context, method, path, token string, body, out any) (code string, err error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return "", err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.http.Do(req)
	status := 0
	if err == nil {
		status = resp.StatusCode
	}
	c.mu.Lock()
	c.statuses[status]++
	c.mu.Unlock()
	if err != nil {
		return codeTransport, err
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	if err != nil {
		return codeTransport, err
	}
	if resp.StatusCode == http.StatusAccepted { // an entry of the opening draw (API.md)
		if out != nil && json.Unmarshal(data, out) != nil {
			return "BAD_RESPONSE", fmt.Errorf("%s %s: 202 %s", method, path, data)
		}
		return codeQueued, nil
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Code, Msg string }
		if json.Unmarshal(data, &e) != nil || e.Code == "" {
			e.Code = fmt.Sprintf("HTTP_%d", resp.StatusCode)
		}
		return e.Code, fmt.Errorf("%s %s: HTTP %d %s: %s", method, path, resp.StatusCode, e.Code, e.Msg)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return "BAD_RESPONSE", fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return "", nil
}

// retryable: the answers a client retries with the same request (API.md: a request_id
// makes a reservation safe to repeat; pay and cancel are idempotent). INTERNAL is among
// them: the request may or may not have happened, and only a retry finds out.
func retryable(code string) bool {
	switch code {
	case codeTransport, "BUSY", "RATE_LIMITED", "INTERNAL", "HTTP_500", "HTTP_502", "HTTP_503", "HTTP_504":
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
	// DrawSeconds > 0: the activity opens with a draw of that window (draw.go); the buyers
	// enter in it and poll for the outcome.
	DrawSeconds int64
}

type buyerKey struct {
	uid int64
	req string
}

// tally is what the buyers were told.
type tally struct {
	mu         sync.Mutex
	reserved   map[buyerKey]string // first 200's order_no per (uid, request_id)
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
	entries    map[int64]entryResp
	twoEntries int
	notEntered int                 // reservations answered 200 in the window, not 202
	wonAt      map[int64]time.Time // when an entrant's replay was first answered 200
}

func newTally() *tally {
	return &tally{reserved: map[buyerKey]string{}, paid: map[string]bool{}, payClosed: map[string]bool{},
		cancelled: map[string]bool{}, codes: map[string]int{}, entries: map[int64]entryResp{},
		wonAt: map[int64]time.Time{}}
}

func (t *tally) code(c string) {
	t.mu.Lock()
	t.codes[c]++
	if c == "BUSY" {
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
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < b.Buyers; i++ {
		at := start.Add(time.Duration(int64(b.Arrive) * int64(i) / int64(b.Buyers)))
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			select {
			case <-time.After(time.Until(at)):
			case <-ctx.Done():
				return
			}
			c, uid, req := cs[i%len(cs)], uidBase+int64(i)+1, fmt.Sprintf("%s-%d", runID, i)
			if b.DrawSeconds > 0 {
				drawBuyer(ctx, c, secret, aid, b, uid, req, t)
				return
			}
			buyer(ctx, c, secret, aid, b, uid, req, t)
		}(i)
	}
	wg.Wait()
}

type reserveResp struct {
	OrderNo  string `json:"order_no"`
	ExpireAt int64  `json:"expire_at"`
}

func buyer(ctx context.Context, c *client, secret string, aid int64, b Burst, uid int64, req string, t *tally) {
	token, err := authtoken.Buyer(secret, uid, time.Hour)
	if err != nil {
		t.code("TOKEN")
		return
	}
	rnd := mrand.New(mrand.NewPCG(uint64(uid), 7))
	reserve := func(req string) (reserveResp, bool) {
		var r reserveResp
		ok, _ := retry(ctx, t, func() (string, error) {
			return c.call(ctx, http.MethodPost, "/v1/seckill/orders", token,
				map[string]any{"activity_id": aid, "quantity": 1, "request_id": req}, &r)
		})
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
func settle(ctx context.Context, c *client, token string, b Burst, rnd *mrand.Rand, r reserveResp, t *tally) {
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
			return c.call(ctx, http.MethodPost, "/v1/seckill/orders/"+r.OrderNo+"/pay", token, nil, nil)
		})
		t.mu.Lock()
		if ok {
			t.paid[r.OrderNo] = true
		} else if code == "ORDER_CLOSED" {
			t.payClosed[r.OrderNo] = true
		}
		t.mu.Unlock()
	case x < b.Pay+b.Cancel:
		if ok, _ := retry(ctx, t, func() (string, error) {
			return c.call(ctx, http.MethodPost, "/v1/seckill/orders/"+r.OrderNo+"/cancel", token, nil, nil)
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
		if code == "" {
			return true, ""
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
				bad = append(bad, fmt.Sprintf("%d x%d (%s)", st, n, c.base))
			}
		}
		c.mu.Unlock()
	}
	return strings.Join(bad, ", ")
}
