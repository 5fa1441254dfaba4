package apiserver_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// replayBodies are a reservation's bodies for each way into the gateway: plain JSON (the
// fast path in front of go-zero's router) and JSON with a key the fast path does not decode
// (the route's own chain).
func replayBodies(aid int64, reqID string) map[string]string {
	return map[string]string{
		"fast path": fmt.Sprintf(`{"activity_id":%d,"quantity":1,"request_id":"%s"}`, aid, reqID),
		"route":     fmt.Sprintf(`{"activity_id":%d,"quantity":1,"request_id":"%s","note":"x"}`, aid, reqID),
	}
}

// expectReplay replays each holder's request through every gateway, both ways in, and
// requires 200 with the holder's own order.
func expectReplay(t *testing.T, aid int64, orders []string, reqID func(int) string, uid func(int) int64,
	gws ...*env) {
	t.Helper()
	for gi, g := range gws {
		for i, want := range orders {
			for way, body := range replayBodies(aid, reqID(i)) {
				code, raw := rawReserve(t, g, buyerToken(t, uid(i)), body)
				var got reserved
				if code != http.StatusOK || decode([]byte(raw), &got) != nil || got.OrderNo != want {
					t.Errorf("gateway %d, %s: buyer %d's replay answered %d %s; want 200 with order %s",
						gi, way, uid(i), code, raw, want)
				}
			}
		}
	}
}

// With every gateway's sold-out mark set, each buyer who holds an order and replays its
// request id gets the order (API.md: a replay is answered as a replay), on either gateway,
// by either way in; a buyer without one is still answered SOLD_OUT by the mark.
func TestMarksNeverAnswerAReplayAfterSoldOut(t *testing.T) {
	e := start(t, soldOutTTL(time.Minute))
	g := e.gateway(soldOutTTL(time.Minute))
	a, orders := sellOut(t, e, 3, nil, e, g)
	before := fastAnswers(t, "SOLD_OUT")
	e.expectErr(http.MethodPost, "/v1/seckill/orders", buyerToken(t, 8000), reserveBody(a.ActivityID, "no-order-1", 1),
		http.StatusConflict, "SOLD_OUT")
	if fastAnswers(t, "SOLD_OUT") != before+1 {
		t.Fatal("the mark did not answer a buyer without an order: the test would prove nothing")
	}
	expectReplay(t, a.ActivityID, orders, func(i int) string { return fmt.Sprintf("sell-%04d", i) },
		func(i int) int64 { return int64(1000 + i) }, e, g)
	if rem, locked, _ := e.redisStock(a.ActivityID); rem != 0 || locked != 3 {
		t.Fatalf("remaining %d, locked %d after the replays; want 0 and 3", rem, locked)
	}
	e.invariant(a.ActivityID)
}

// After the end, with both gateways answering ENDED from the window they learnt, each
// holder's replay is still answered with its order.
func TestMarksNeverAnswerAReplayAfterTheEnd(t *testing.T) {
	e := start(t)
	g := e.gateway()
	end := time.Now().Unix() + 3
	a := e.warm(map[string]any{"stock": 5, "per_user_limit": 1, "end_time": end})
	var orders []string
	for i := range 2 {
		var r reserved
		e.call(http.MethodPost, "/v1/seckill/orders", buyerToken(t, int64(2000+i)),
			reserveBody(a.ActivityID, fmt.Sprintf("before-end-%d", i), 1), &r)
		orders = append(orders, r.OrderNo)
	}
	// Past the end and the edge's clock margin (1 s), each gateway learns the window from
	// an ENDED answer, then answers ENDED itself.
	time.Sleep(time.Until(time.Unix(end, 0).Add(1500 * time.Millisecond)))
	for gi, gw := range []*env{e, g} {
		deadline := time.Now().Add(10 * time.Second)
		for n := 0; ; n++ {
			before := fastAnswers(t, "ENDED")
			gw.expectErr(http.MethodPost, "/v1/seckill/orders", buyerToken(t, int64(3000+100*gi+n)),
				reserveBody(a.ActivityID, fmt.Sprintf("after-end-%d", n), 1), http.StatusConflict, "ENDED")
			if fastAnswers(t, "ENDED") > before {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("gateway %d never answered ENDED itself", gi)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	expectReplay(t, a.ActivityID, orders, func(i int) string { return fmt.Sprintf("before-end-%d", i) },
		func(i int) int64 { return int64(2000 + i) }, e, g)
}

// A burst across a Redis stall while stock remains (the inventory service's Redis answers
// late, so every buyer of the burst is told BUSY although the scripts ran): once each BUSY
// is retried with its request_id, as API.md says is safe, through the other gateway, the
// buyers told 200 are exactly the orders Redis holds. Before the edge asked the buyers hash,
// the first loser's SOLD_OUT set the mark and every holder retrying after it heard SOLD_OUT.
func TestBusyRetriesAcrossARedisStallKeepTheirOrders(t *testing.T) {
	const buyers, stockN = 300, 60
	proxy, err := devenv.StartProxy(testenv.RedisAddr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	short := func(c *apiserver.Config) { c.Inventory.Timeout = 500; c.Edge.SoldOutTTL = time.Minute }
	e := startWith(t, func(c *rpcserver.Config) { c.StockRedis.Host = proxy.Addr }, short)
	g := e.gateway(short)
	a := e.warm(map[string]any{"stock": stockN, "per_user_limit": 1})
	gws := []*env{e, g}
	proxy.SetDelay(1500 * time.Millisecond)
	codes := make([]int, buyers)
	var wg sync.WaitGroup
	for i := range buyers {
		wg.Go(func() {
			codes[i], _ = gws[i%2].do(http.MethodPost, "/v1/seckill/orders", buyerToken(t, int64(10000+i)),
				reserveBody(a.ActivityID, fmt.Sprintf("stall-%04d", i), 1))
		})
	}
	wg.Wait()
	proxy.SetDelay(0)
	told := map[string]bool{}
	busy := 0
	for i := range buyers {
		code := codes[i]
		switch code {
		case http.StatusServiceUnavailable:
			busy++
			code = retryBusy(t, gws[(i+1)%2], int64(10000+i), a.ActivityID, fmt.Sprintf("stall-%04d", i), told)
		case http.StatusOK:
			code = retryBusy(t, gws[i%2], int64(10000+i), a.ActivityID, fmt.Sprintf("stall-%04d", i), told)
		}
		if code != http.StatusOK && code != http.StatusConflict {
			t.Fatalf("buyer %d: %d", i, code)
		}
	}
	if busy < buyers/2 {
		t.Fatalf("only %d of %d buyers were told BUSY: the stall did not happen", busy, buyers)
	}
	rem, locked, _ := e.redisStock(a.ActivityID)
	if int64(len(told)) != locked || rem != 0 || locked != stockN {
		t.Fatalf("buyers told of %d orders; Redis holds %d (remaining %d, stock %d)", len(told), locked, rem, stockN)
	}
	e.invariant(a.ActivityID)
	t.Logf("%d of %d buyers told BUSY in the stall; after their retries %d hold orders", busy, buyers, len(told))
}

// retryBusy sends buyer uid's reservation reqID through g until it is answered other than
// BUSY (at most 40 s), recording a 200's order in told; it returns the final status.
func retryBusy(t *testing.T, g *env, uid, aid int64, reqID string, told map[string]bool) int {
	t.Helper()
	for deadline := time.Now().Add(40 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		code, raw := g.do(http.MethodPost, "/v1/seckill/orders", buyerToken(t, uid), reserveBody(aid, reqID, 1))
		if code == http.StatusServiceUnavailable {
			continue
		}
		var r reserved
		if code == http.StatusOK {
			if err := decode(raw, &r); err != nil || r.OrderNo == "" {
				t.Fatalf("buyer %d: 200 %s", uid, raw)
			}
			told[r.OrderNo] = true
		}
		return code
	}
	t.Fatalf("buyer %d still BUSY after 40 s", uid)
	return 0
}

// After the opening draw, with both gateways' sold-out marks set, each winner's replay of
// its entry is answered with its order, each loser's with SOLD_OUT.
func TestMarksNeverAnswerADrawWinner(t *testing.T) {
	e := start(t, soldOutTTL(time.Minute))
	g := e.gateway(soldOutTTL(time.Minute))
	a := e.warm(map[string]any{"stock": 2, "per_user_limit": 1, "start_time": time.Now().Unix() - 1,
		"draw_seconds": 5}) // 4 s or more to enter 6 buyers, on a loaded machine too
	const entrants = 6
	rid := func(uid int64) string { return fmt.Sprintf("draw-entry-%04d", uid) }
	for uid := int64(1); uid <= entrants; uid++ {
		if code, raw := e.do(http.MethodPost, "/v1/seckill/orders", buyerToken(t, uid),
			reserveBody(a.ActivityID, rid(uid), 1)); code != http.StatusAccepted {
			t.Fatalf("entry of %d: %d %s", uid, code, raw)
		}
	}
	admin := fmt.Sprintf("/v1/admin/activities/%d", a.ActivityID)
	var v drawView
	for deadline := time.Now().Add(20 * time.Second); v.Draw == nil || v.Draw.Status != "done"; {
		if time.Now().After(deadline) {
			t.Fatalf("the draw was not done in time: %+v", v.Draw)
		}
		time.Sleep(100 * time.Millisecond)
		e.call(http.MethodGet, admin, merchantToken(t, merchantID), nil, &v)
	}
	for gi, gw := range []*env{e, g} { // a buyer who did not enter sets each gateway's mark
		gw.expectErr(http.MethodPost, "/v1/seckill/orders", buyerToken(t, int64(500+gi)),
			reserveBody(a.ActivityID, fmt.Sprintf("after-draw-%d", gi), 1), http.StatusConflict, "SOLD_OUT")
	}
	before := fastAnswers(t, "SOLD_OUT") // the losers hold a verdict: the service answers them
	won := map[int64]string{}
	for _, gw := range []*env{e, g} {
		for uid := int64(1); uid <= entrants; uid++ {
			code, raw := rawReserve(t, gw, buyerToken(t, uid), replayBodies(a.ActivityID, rid(uid))["fast path"])
			var r reserved
			switch {
			case code == http.StatusOK && decode([]byte(raw), &r) == nil && r.OrderNo != "":
				if prev, ok := won[uid]; ok && prev != r.OrderNo {
					t.Fatalf("winner %d: order %s, then %s", uid, prev, r.OrderNo)
				}
				won[uid] = r.OrderNo
			case code != http.StatusConflict:
				t.Fatalf("replay of entrant %d: %d %s", uid, code, raw)
			}
		}
	}
	if len(won) != 2 {
		t.Fatalf("%d winners answered with their orders, want 2", len(won))
	}
	for gi, gw := range []*env{e, g} { // the marks held all along
		gw.expectErr(http.MethodPost, "/v1/seckill/orders", buyerToken(t, int64(600+gi)),
			reserveBody(a.ActivityID, fmt.Sprintf("marked-%d", gi), 1), http.StatusConflict, "SOLD_OUT")
	}
	if fastAnswers(t, "SOLD_OUT") != before+2 {
		t.Fatalf("the marks answered %v buyers who did not enter, want 2", fastAnswers(t, "SOLD_OUT")-before)
	}
}
