package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/rpc/inventoryclient"
)

// TestEditMovesEveryGatewaysWindow: a gateway that learned an activity's window (NOT_STARTED,
// an hour away) drops it on the edit made through another gateway, so once the new start has
// come it lets reservations through within about a second (with the window kept for its
// Edge.WindowTTL it would answer NOT_STARTED by itself for up to 10 s).
func TestEditMovesEveryGatewaysWindow(t *testing.T) {
	e := start(t)
	g2 := e.gateway()
	now := time.Now().Unix()
	a := e.warm(map[string]any{"stock": 100, "start_time": now + 3600, "end_time": now + 7200})
	for i := range 2 { // the first answer makes g2 learn the window; the second is g2's own
		g2.expectErr(http.MethodPost, "/v1/seckill/orders", buyerToken(t, int64(10+i)),
			reserveBody(a.ActivityID, fmt.Sprintf("early-req-%d", i), 1), http.StatusConflict, "NOT_STARTED")
		time.Sleep(300 * time.Millisecond)
	}
	opens := time.Now().Unix() + 2
	e.call(http.MethodPut, activityPath(a.ActivityID), merchantToken(t, merchantID),
		editBody(a, map[string]any{"start_time": opens, "end_time": opens + 600}), nil)
	untilUnix(opens)
	deadline := time.Unix(opens, 0).Add(time.Second)
	for uid := int64(100); ; uid++ {
		code, raw := g2.do(http.MethodPost, "/v1/seckill/orders", buyerToken(t, uid),
			reserveBody(a.ActivityID, fmt.Sprintf("open-req-%d", uid), 1))
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second gateway %v after the edited start: %d %s", time.Since(time.Unix(opens, 0)), code, raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestEditRacesTheStart: edits sent without pause across the start moment while buyers
// reserve from it on. Whatever the interleaving, no edit is half applied and none lands after
// the sale opened: MySQL and the warmed copy agree on every field at the end, every
// reservation was charged the final price, and the final price is the last accepted edit's;
// every edit is answered 200, 409 STARTED or 503 BUSY (the load lock busy), nothing else.
func TestEditRacesTheStart(t *testing.T) {
	e := start(t)
	now := time.Now().Unix()
	a := e.warm(map[string]any{"stock": 1000, "start_time": now + 3600, "end_time": now + 7200, "price": 1})
	opens := time.Now().Unix() + 3
	e.call(http.MethodPut, activityPath(a.ActivityID), merchantToken(t, merchantID),
		editBody(a, map[string]any{"start_time": opens, "end_time": opens + 600, "price": 2}), nil)
	a.StartTime, a.EndTime = opens, opens+600
	begin, stop := time.Unix(opens, 0).Add(-400*time.Millisecond), time.Unix(opens, 0).Add(400*time.Millisecond)
	var (
		mu       sync.Mutex
		accepted = map[int64]bool{} // prices of the edits answered 200
		amounts  []int64
		wg       sync.WaitGroup
	)
	time.Sleep(time.Until(begin))
	for i := range 6 {
		wg.Add(2)
		go func() { // an editor
			defer wg.Done()
			for j := int64(0); time.Now().Before(stop); j++ {
				price := 1000 + int64(i)*1000 + j
				code, raw := e.do(http.MethodPut, activityPath(a.ActivityID), merchantToken(t, merchantID),
					editBody(a, map[string]any{"price": price, "per_user_limit": 1 + price%3}))
				var eb errBody
				_ = json.Unmarshal(raw, &eb)
				switch {
				case code == http.StatusOK:
					mu.Lock()
					accepted[price] = true
					mu.Unlock()
				case code == http.StatusConflict && eb.Code == "STARTED", code == http.StatusServiceUnavailable:
				default:
					t.Errorf("edit: %d %s", code, raw)
				}
			}
		}()
		go func() { // a buyer
			defer wg.Done()
			time.Sleep(time.Until(time.Unix(opens, 0)))
			for uid := int64(i) * 10000; time.Now().Before(stop.Add(200 * time.Millisecond)); uid++ {
				code, raw := e.do(http.MethodPost, "/v1/seckill/orders", buyerToken(t, uid),
					reserveBody(a.ActivityID, fmt.Sprintf("race-req-%d", uid), 1))
				if code == http.StatusOK {
					var r priced
					_ = json.Unmarshal(raw, &r)
					mu.Lock()
					amounts = append(amounts, r.amount())
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	m, r := e.mysqlActivity(a.ActivityID), e.redisActivity(a.ActivityID)
	if m != r {
		t.Fatalf("half applied: mysql %+v, redis %+v", m, r)
	}
	if len(accepted) == 0 || len(amounts) == 0 || !accepted[m.Price] {
		t.Fatalf("%d edits accepted, %d reservations; final price %d accepted: %v", len(accepted), len(amounts),
			m.Price, accepted[m.Price])
	}
	for p := range accepted {
		if p > m.Price && p/1000 == m.Price/1000 { // a later edit of the same editor won, yet is not the final
			t.Fatalf("edit to price %d was accepted after the final one (%d)", p, m.Price)
		}
	}
	for _, amt := range amounts {
		if amt != m.Price {
			t.Fatalf("a reservation was charged %d, the final price is %d", amt, m.Price)
		}
	}
	t.Logf("%d edits accepted, %d reservations at price %d", len(accepted), len(amounts), m.Price)
}

// TestEditRacesTheWarmup: edits of cold activities sent while they are warmed up. The edit
// holds the activity's load lock, so a warm-up reads MySQL before the edit (and the edit then
// rewrites its copy) or after it: never the old row written into Redis after the edit found
// nothing to rewrite. Each activity's MySQL row and warmed copy agree at the end.
func TestEditRacesTheWarmup(t *testing.T) {
	e := start(t)
	now := time.Now().Unix()
	ctx := context.Background()
	var wg sync.WaitGroup
	var acts []activity
	for range 20 {
		acts = append(acts, e.create(map[string]any{"stock": 10, "start_time": now + 3600, "end_time": now + 7200}))
	}
	for i, a := range acts {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range 20 { // BUSY while another instance of the load runs: retried, as a client would
				_, err := e.inv.Warmup(ctx, &inventoryclient.WarmupReq{ActivityId: a.ActivityID, MerchantId: merchantID})
				if err == nil {
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Errorf("activity %d not warmed", a.ActivityID)
		}()
		go func() {
			defer wg.Done()
			for range 20 {
				_, err := e.inv.UpdateActivity(ctx, &inventoryclient.UpdateActivityReq{ActivityId: a.ActivityID,
					MerchantId: merchantID, SkuId: a.SkuID, Name: fmt.Sprintf("edited-%d", i), StartTime: a.StartTime,
					EndTime: a.EndTime, PerUserLimit: 2, PayTimeoutSeconds: 60, Price: 500 + int64(i)})
				if err == nil {
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Errorf("activity %d not edited", a.ActivityID)
		}()
	}
	wg.Wait()
	for _, a := range acts {
		m, r := e.mysqlActivity(a.ActivityID), e.redisActivity(a.ActivityID)
		if m != r || m.Price < 500 {
			t.Errorf("activity %d: mysql %+v, redis %+v", a.ActivityID, m, r)
		}
	}
}
