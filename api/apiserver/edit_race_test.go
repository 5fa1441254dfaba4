package apiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
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
