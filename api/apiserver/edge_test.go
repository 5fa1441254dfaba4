package apiserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// soldOutTTL sets the gateway's sold-out mark TTL.
func soldOutTTL(d time.Duration) func(*apiserver.Config) {
	return func(c *apiserver.Config) { c.Edge.SoldOutTTL = d }
}

// sellOut reserves every unit of a fresh activity (stock n) and returns it with the
// orders; then one more buyer is told SOLD_OUT by the inventory service, setting the
// mark of every gateway in gws.
func sellOut(t *testing.T, e *env, n int, fields map[string]any, gws ...*env) (activity, []string) {
	t.Helper()
	f := map[string]any{"stock": n, "per_user_limit": 1}
	for k, v := range fields {
		f[k] = v
	}
	a := e.warm(f)
	var orders []string
	for i := range n {
		var r reserved
		e.call(
			http.MethodPost,
			"/v1/seckill/orders",
			buyerToken(t, int64(1000+i)),
			reserveBody(a.ActivityID, fmt.Sprintf("sell-%04d", i), 1),
			&r,
		)
		orders = append(orders, r.OrderNo)
	}
	for _, g := range gws {
		g.expectErr(
			http.MethodPost,
			"/v1/seckill/orders",
			buyerToken(t, 9999),
			reserveBody(a.ActivityID, "set-the-mark", 1),
			http.StatusConflict,
			"SOLD_OUT",
		)
	}
	return a, orders
}

// invariant checks remaining + locked + sold == total and the orders against the counters.
func (e *env) invariant(aid int64) {
	e.t.Helper()
	se := &stocktest.Env{T: e.t, Redis: e.rds, Keys: e.keys, Store: stock.NewStore(e.rds, e.keys)}
	se.CheckInvariant(aid)
}

// sneakStockIn returns one unit to remaining without any script (so without a stock-back
// message): only the mark's TTL can let a buyer see it.
func (e *env) sneakStockIn(aid int64) {
	e.t.Helper()
	if _, err := e.rds.Hincrby(e.keys.Stock(aid), "remaining", 1); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.rds.Hincrby(e.keys.Stock(aid), "total", 1); err != nil {
		e.t.Fatal(err)
	}
}

// until retries a reservation on g (fresh buyers) until one is reserved or d passes, and
// returns how long it took; -1 when none was.
func until(t *testing.T, g *env, aid int64, d time.Duration, uidBase int64) time.Duration {
	t.Helper()
	start := time.Now()
	for i := int64(0); time.Since(start) < d; i++ {
		code, raw := g.do(
			http.MethodPost,
			"/v1/seckill/orders",
			buyerToken(t, uidBase+i),
			reserveBody(aid, fmt.Sprintf("retry-%06d", i), 1),
		)
		if code == http.StatusOK {
			return time.Since(start)
		}
		var eb errBody
		if err := decode(raw, &eb); err != nil || eb.Code != "SOLD_OUT" {
			t.Fatalf("reservation: %d %s", code, raw)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return -1
}

func TestSoldOutMarkAnswersAtTheEdgeUntilItsTTL(t *testing.T) {
	const ttl = 700 * time.Millisecond
	e := start(t, soldOutTTL(ttl))
	a, _ := sellOut(t, e, 2, nil, e)
	e.sneakStockIn(a.ActivityID)
	set := time.Now()
	// The inventory service would sell the unit now; the gateway answers SOLD_OUT itself.
	e.expectErr(http.MethodPost, "/v1/seckill/orders", buyerToken(t, 5000), reserveBody(a.ActivityID, "edge-answer", 1),
		http.StatusConflict, "SOLD_OUT")
	if rem, _, _ := e.redisStock(a.ActivityID); rem != 1 {
		t.Fatalf("remaining %d: the edge answer reached the inventory service", rem)
	}
	took := until(t, e, a.ActivityID, 5*time.Second, 6000)
	if took < 0 {
		t.Fatal("the unit was never sold: the mark outlived its TTL")
	}
	if waited := time.Since(set); waited < ttl/2 || waited > ttl+500*time.Millisecond {
		t.Fatalf("sold %v after the mark was set; want about the TTL %v", waited, ttl)
	}
}

func TestStockBackClearsTheMarkOnEveryGateway(t *testing.T) {
	// A TTL far beyond the test: only the stock-back message can clear the marks.
	const ttl = time.Minute
	e := start(t, soldOutTTL(ttl))
	g2 := e.gateway(soldOutTTL(ttl))
	ctx := context.Background()
	returns := []struct {
		name   string
		fields map[string]any
		back   func(t *testing.T, aid int64, orders []string)
	}{
		{"cancel", nil, func(t *testing.T, aid int64, orders []string) {
			// Through the inventory service directly: neither gateway sees the call.
			for i, o := range orders { // sellOut's buyer i is uid 1000+i
				if _, err := e.inv.Release(ctx, &inventoryclient.OrderReq{OrderNo: o,
					Uid: int64(1000 + i)}); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"expiry", map[string]any{"pay_timeout_seconds": 1}, func(t *testing.T, aid int64, orders []string) {
			time.Sleep(1100 * time.Millisecond)
			res, err := e.inv.ExpireDue(ctx, &inventoryclient.ExpireDueReq{ActivityId: aid, Limit: 10})
			if err != nil || len(res.GetOrderNos()) != 2 {
				t.Fatalf("expired %v, %v", res.GetOrderNos(), err)
			}
		}},
		{"adjust +", nil, func(t *testing.T, aid int64, orders []string) {
			if _, err := e.inv.Adjust(ctx, &inventoryclient.AdjustReq{ActivityId: aid, Delta: 2}); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for i, r := range returns {
		t.Run(r.name, func(t *testing.T) {
			// Two units come back, one for each gateway to sell.
			a, orders := sellOut(t, e, 2, r.fields, e, g2)
			// Stock sneaked in without a message stays behind the marks.
			for _, g := range []*env{e, g2} {
				g.expectErr(
					http.MethodPost,
					"/v1/seckill/orders",
					buyerToken(t, 7000),
					reserveBody(a.ActivityID, "still-marked", 1),
					http.StatusConflict,
					"SOLD_OUT",
				)
			}
			r.back(t, a.ActivityID, orders)
			for j, g := range []*env{e, g2} {
				took := until(t, g, a.ActivityID, 3*time.Second, int64(100000*(i+1)+1000*j))
				if took < 0 {
					t.Fatalf("gateway %d still answers SOLD_OUT 3 s after stock came back (mark TTL %v)", j, ttl)
				}
			}
			e.invariant(a.ActivityID)
		})
	}
}

// A cancel during a sold-out storm on two gateways: once the cancel returned, no buyer is
// told SOLD_OUT for longer than the mark's TTL while the unit is still there.
func TestCancelDuringSoldOutStorm(t *testing.T) {
	const ttl = time.Second
	e := start(t, soldOutTTL(ttl))
	g2 := e.gateway(soldOutTTL(ttl))
	gws := []*env{e, g2}
	a, orders := sellOut(t, e, 5, nil, gws...)

	var (
		uid      atomic.Int64
		back     atomic.Int64 // unix ns when the cancel returned; 0 before
		mu       sync.Mutex
		resold   []time.Time // when a reservation succeeded (response received)
		lastSold time.Time   // latest SOLD_OUT answer to a request sent after the cancel returned
		wg       sync.WaitGroup
	)
	uid.Store(200000)
	stop := make(chan struct{})
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := gws[w%2]
			for {
				select {
				case <-stop:
					return
				default:
				}
				u := uid.Add(1)
				sent := time.Now()
				code, raw := g.do(
					http.MethodPost,
					"/v1/seckill/orders",
					buyerToken(t, u),
					reserveBody(a.ActivityID, fmt.Sprintf("storm-%08d", u), 1),
				)
				got := time.Now()
				var eb errBody
				_ = decode(raw, &eb)
				mu.Lock()
				switch {
				case code == http.StatusOK:
					resold = append(resold, got)
				case eb.Code == "SOLD_OUT":
					if b := back.Load(); b != 0 && sent.UnixNano() > b && len(resold) == 0 {
						lastSold = got
					}
				default:
					t.Errorf("storm: %d %s", code, raw)
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(300 * time.Millisecond) // the storm is on, answered at the edge
	if _, err := e.inv.Release(context.Background(), &inventoryclient.OrderReq{OrderNo: orders[0],
		Uid: 1000}); err != nil {
		t.Fatal(err)
	}
	back.Store(time.Now().UnixNano())
	time.Sleep(ttl + 500*time.Millisecond)
	close(stop)
	wg.Wait()

	if len(resold) != 1 {
		t.Fatalf("%d reservations after the cancel, want exactly the one unit that came back", len(resold))
	}
	backAt := time.Unix(0, back.Load())
	if d := resold[0].Sub(backAt); d > ttl {
		t.Fatalf("the returned unit was sold %v after the cancel returned (TTL %v)", d, ttl)
	}
	if !lastSold.IsZero() && lastSold.Sub(backAt) > ttl {
		t.Fatalf(
			"a buyer was told SOLD_OUT %v after the cancel returned, the unit still unsold (TTL %v)",
			lastSold.Sub(backAt),
			ttl,
		)
	}
	e.invariant(a.ActivityID)
	t.Logf("the returned unit was sold %v after the cancel returned", resold[0].Sub(backAt))
}

func TestWindowAnswersAtTheEdge(t *testing.T) {
	e := start(t)
	now := time.Now().Unix()
	upcoming := e.warm(map[string]any{"start_time": now + 3600, "end_time": now + 7200})
	ended := e.create(map[string]any{"start_time": now - 7200, "end_time": now - 10})
	buyer := buyerToken(t, 1)
	for _, c := range []struct {
		a    activity
		code string
	}{{upcoming, "NOT_STARTED"}, {ended, "ENDED"}} {
		e.expectErr(
			http.MethodPost,
			"/v1/seckill/orders",
			buyer,
			reserveBody(c.a.ActivityID, "learn-window", 1),
			http.StatusConflict,
			c.code,
		)
	}
	// The window is learnt in the background (one GetStock over loopback); then the
	// answers come from the gateway: with the inventory service gone, they still do.
	time.Sleep(time.Second)
	e.rpc.Stop()
	for _, c := range []struct {
		a    activity
		code string
	}{{upcoming, "NOT_STARTED"}, {ended, "ENDED"}} {
		e.expectErr(
			http.MethodPost,
			"/v1/seckill/orders",
			buyer,
			reserveBody(c.a.ActivityID, "edge-window", 1),
			http.StatusConflict,
			c.code,
		)
	}
}

// TestSoldOutMarkKeepsBadRequestAnswers: while an activity's mark holds, bad input for it
// gets exactly the answer it gets for an activity without a mark (validation comes first,
// on the gateway's fast path as in ReserveLogic), a bad token is still 401, and a valid
// body the fast path does not decode is still told SOLD_OUT (by ReserveLogic).
func TestSoldOutMarkKeepsBadRequestAnswers(t *testing.T) {
	e := start(t, soldOutTTL(time.Minute))
	marked, _ := sellOut(t, e, 1, nil, e)
	other := e.warm(map[string]any{"stock": 5, "per_user_limit": 1})
	tok := buyerToken(t, 7000)
	for _, body := range []string{
		`{"activity_id":%d,"quantity":0,"request_id":"bad-quantity"}`,
		`{"activity_id":%d,"quantity":1,"request_id":"short"}`,
		`{"activity_id":%d,"quantity":1,"request_id":"has a space"}`,
		`{"activity_id":"%d","quantity":1,"request_id":"string-aid-1"}`,
		`{"activity_id":%d.5,"quantity":1,"request_id":"fraction-aid"}`,
		`{"activity_id":%d,"quantity":1}`,
		`{"activity_id":%d,"quantity":1,"request_id":"truncated-1"`,
		`{"activity_id":-%d,"quantity":1,"request_id":"negative-aid"}`,
	} {
		// A message may quote the body: compare with each body replaced by BODY.
		quoted := func(aid int64) string { return strings.ReplaceAll(fmt.Sprintf(body, aid), `"`, `\"`) }
		wantCode, want := rawReserve(t, e, tok, fmt.Sprintf(body, other.ActivityID))
		code, got := rawReserve(t, e, tok, fmt.Sprintf(body, marked.ActivityID))
		if wantCode/100 != 4 || wantCode == http.StatusConflict {
			t.Fatalf("%s on an unmarked activity: %d %s; the case expects a 4xx of bad input", body, wantCode, want)
		}
		norm := func(msg string, aid int64) string {
			return strings.ReplaceAll(strings.ReplaceAll(msg, quoted(aid), "BODY"), fmt.Sprintf(`%d.5`, aid), `N.5`)
		}
		if code != wantCode || norm(got, marked.ActivityID) != norm(want, other.ActivityID) {
			t.Errorf("%s: marked activity %d %s; unmarked %d %s", body, code, got, wantCode, want)
		}
	}
	valid := fmt.Sprintf(`{"activity_id":%d,"quantity":1,"request_id":"not-fast-1","note":"x"}`, marked.ActivityID)
	if code, got := rawReserve(t, e, tok, valid); code != http.StatusConflict || !strings.Contains(got, "SOLD_OUT") {
		t.Errorf("a valid body with an extra key: %d %s, want 409 SOLD_OUT", code, got)
	}
	plain := fmt.Sprintf(`{"activity_id":%d,"quantity":1,"request_id":"fast-path-1"}`, marked.ActivityID)
	if code, got := rawReserve(t, e, "not-a-token", plain); code != http.StatusUnauthorized {
		t.Errorf("a bad token on a marked activity: %d %s, want 401", code, got)
	}
	if code, got := rawReserve(t, e, tok, plain); code != http.StatusConflict || !strings.Contains(got, "SOLD_OUT") {
		t.Errorf("a plain valid body: %d %s, want 409 SOLD_OUT", code, got)
	}
}

// rawReserve posts body as it is.
func rawReserve(t *testing.T, e *env, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.base+"/v1/seckill/orders", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}
