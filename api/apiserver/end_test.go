package apiserver_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestEndActivity: ending a live sale moves end_time to now; a reservation through another
// gateway is ENDED within about a second, an order reserved before can still be paid, and
// ending it again changes nothing.
func TestEndActivity(t *testing.T) {
	e := start(t)
	g2 := e.gateway()
	tok := merchantToken(t, merchantID)
	a := e.warm(map[string]any{"stock": 10})
	var before, open reserved
	e.call(http.MethodPost, "/v1/seckill/orders", buyerToken(t, 1), reserveBody(a.ActivityID, "end-before-1", 1), &before)
	g2.call(http.MethodPost, "/v1/seckill/orders", buyerToken(t, 2), reserveBody(a.ActivityID, "end-before-2", 1), &open)

	path := fmt.Sprintf("/v1/admin/activities/%d/end", a.ActivityID)
	e.expectErr(http.MethodPost, path, merchantToken(t, merchantID+1), nil, http.StatusNotFound, "ACTIVITY_NOT_FOUND")
	var ended activity
	t0 := time.Now()
	e.call(http.MethodPost, path, tok, nil, &ended)
	if now := time.Now().Unix(); ended.EndTime > now || ended.EndTime < t0.Unix()-1 ||
		ended.StartTime != a.StartTime || ended.Stock != 10 {
		t.Fatalf("ended %+v, want end_time about %d, the rest of %+v", ended, now, a)
	}

	// Poll: each try a new buyer, so that no limit answers first.
	uid, deadline := int64(100), t0.Add(1500*time.Millisecond)
	for {
		uid++
		code, raw := g2.do(http.MethodPost, "/v1/seckill/orders", buyerToken(t, uid),
			reserveBody(a.ActivityID, fmt.Sprintf("end-after-%d", uid), 1))
		var eb errBody
		_ = decode(raw, &eb)
		if code == http.StatusConflict && eb.Code == "ENDED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reservation through the second gateway %v after the end: %d %s", time.Since(t0), code, raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.expectErr(http.MethodPost, "/v1/seckill/orders", buyerToken(t, 3), reserveBody(a.ActivityID, "end-after-x", 1),
		http.StatusConflict, "ENDED")

	var paid, cancelled orderState
	g2.call(http.MethodPost, orderPath(before.OrderNo, "/pay"), buyerToken(t, 1), nil, &paid)
	e.call(http.MethodPost, orderPath(open.OrderNo, "/cancel"), buyerToken(t, 2), nil, &cancelled)
	if paid.Status != "paid" || cancelled.Status != "cancelled" {
		t.Fatalf("after the end: pay %+v, cancel %+v", paid, cancelled)
	}

	var again activity
	e.call(http.MethodPost, path, tok, nil, &again)
	if again != ended {
		t.Fatalf("ending again: %+v, want %+v unchanged", again, ended)
	}
	var view activityView
	g2.call(http.MethodGet, fmt.Sprintf("/v1/activities/%d", a.ActivityID), buyerToken(t, 1), nil, &view)
	if view.Status != "ended" || view.EndTime != ended.EndTime {
		t.Fatalf("buyer view after the end: %+v", view)
	}
}

// TestEndBeforeStart: an activity that has not started is not ended (409 NOT_STARTED, edit
// it instead), nor one whose opening draw is not done (409 DRAW_PENDING); nothing changes.
func TestEndBeforeStart(t *testing.T) {
	e := start(t)
	tok := merchantToken(t, merchantID)
	now := time.Now().Unix()
	for _, tc := range []struct {
		fields map[string]any
		code   string
	}{
		{map[string]any{"start_time": now + 3600, "end_time": now + 7200}, "NOT_STARTED"},
		{map[string]any{"start_time": now - 1, "draw_seconds": 120}, "DRAW_PENDING"},
	} {
		a := e.warm(tc.fields)
		e.expectErr(http.MethodPost, fmt.Sprintf("/v1/admin/activities/%d/end", a.ActivityID), tok, nil,
			http.StatusConflict, tc.code)
		var got activity
		e.call(http.MethodGet, fmt.Sprintf("/v1/admin/activities/%d", a.ActivityID), tok, nil, &got)
		if got.EndTime != a.EndTime {
			t.Errorf("%s: end_time %d, want %d unchanged", tc.code, got.EndTime, a.EndTime)
		}
	}
	e.expectErr(http.MethodPost, "/v1/admin/activities/999999/end", tok, nil, http.StatusNotFound, "ACTIVITY_NOT_FOUND")
}
