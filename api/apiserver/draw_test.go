package apiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"
)

type entryBody struct {
	ActivityID int64  `json:"activity_id"`
	RequestID  string `json:"request_id"`
	Quantity   int64  `json:"quantity"`
	Status     string `json:"status"`
	OrderNo    string `json:"order_no"`
	DrawAt     int64  `json:"draw_at"`
}

type drawView struct {
	Draw *struct {
		Seconds, Entries, Winners int64
		Status                    string
	} `json:"draw"`
}

// The opening draw through the gateway: draw_seconds is bounded; in the window a reservation
// is 202 queued (a further one of the buyer answers the first entry, a quantity above the
// limit is 409 LIMIT_EXCEEDED); GET entries is 200 or 404 ENTRY_NOT_FOUND; the admin view shows
// the draw; after the inventory service's draw, replaying the entry is 200 with the order or
// 409 SOLD_OUT, and the entries and the admin view say who won.
func TestDrawThroughTheGateway(t *testing.T) {
	e := start(t)
	now := time.Now().Unix()
	e.expectErr(http.MethodPost, "/v1/admin/activities", merchantToken(t, merchantID), map[string]any{
		"sku_id": 42, "name": "phone", "stock": 3, "start_time": now - 1, "end_time": now + 3600,
		"draw_seconds": 601}, http.StatusBadRequest, "INVALID_ARGUMENT")
	a := e.warm(map[string]any{"stock": 3, "per_user_limit": 2, "start_time": now - 1, "draw_seconds": 4})
	drawAt := now - 1 + 4
	const buyers = 8
	rid := func(uid int64) string { return fmt.Sprintf("entry-%08d", uid) }
	for uid := int64(1); uid <= buyers; uid++ {
		code, raw, h := e.doWithHeaders(http.MethodPost, "/v1/seckill/orders", buyerToken(t, uid),
			reserveBody(a.ActivityID, rid(uid), 1))
		var b entryBody
		_ = json.Unmarshal(raw, &b)
		if code != http.StatusAccepted || b.Status != "queued" || b.RequestID != rid(uid) || b.DrawAt != drawAt ||
			b.ActivityID != a.ActivityID || b.Quantity != 1 {
			t.Fatalf("entry of %d: %d %s; want 202 queued draw_at %d", uid, code, raw, drawAt)
		}
		checkRetryAfterDraw(t, h, drawAt)
	}
	code, raw := e.do(http.MethodPost, "/v1/seckill/orders", buyerToken(t, 1), reserveBody(a.ActivityID, "another-1", 2))
	var first entryBody
	if json.Unmarshal(raw, &first) != nil || code != http.StatusAccepted || first.RequestID != rid(1) ||
		first.Quantity != 1 {
		t.Fatalf("a further reservation of an entrant: %d %s; want 202 with the first entry", code, raw)
	}
	e.expectErr(http.MethodPost, "/v1/seckill/orders", buyerToken(t, 50), reserveBody(a.ActivityID, rid(50), 3),
		http.StatusConflict, "LIMIT_EXCEEDED")
	path := fmt.Sprintf("/v1/seckill/entries/%d", a.ActivityID)
	var got entryBody
	e.call(http.MethodGet, path, buyerToken(t, 2), nil, &got)
	if got.Status != "queued" || got.RequestID != rid(2) || got.DrawAt != drawAt {
		t.Fatalf("GET entry: %+v", got)
	}
	e.expectErr(http.MethodGet, path, buyerToken(t, 99), nil, http.StatusNotFound, "ENTRY_NOT_FOUND")
	admin := fmt.Sprintf("/v1/admin/activities/%d", a.ActivityID)
	var v drawView
	e.call(http.MethodGet, admin, merchantToken(t, merchantID), nil, &v)
	if v.Draw == nil || v.Draw.Seconds != 4 || v.Draw.Entries != buyers || v.Draw.Status != "pending" {
		t.Fatalf("admin view before the draw: %+v", v.Draw)
	}
	deadline := time.Now().Add(20 * time.Second)
	for v.Draw.Status != "done" {
		if time.Now().After(deadline) {
			t.Fatalf("the draw was not done by %v: %+v", deadline, v.Draw)
		}
		time.Sleep(100 * time.Millisecond)
		e.call(http.MethodGet, admin, merchantToken(t, merchantID), nil, &v)
	}
	if v.Draw.Winners != 3 {
		t.Fatalf("admin view after the draw: %+v, want 3 winners", v.Draw)
	}
	won := 0
	for uid := int64(1); uid <= buyers; uid++ {
		tok := buyerToken(t, uid)
		code, raw := e.do(http.MethodPost, "/v1/seckill/orders", tok, reserveBody(a.ActivityID, rid(uid), 1))
		var g entryBody
		e.call(http.MethodGet, path, tok, nil, &g)
		switch code {
		case http.StatusOK:
			var r reserved
			_ = json.Unmarshal(raw, &r)
			if r.Status != "reserved" || g.Status != "won" || g.OrderNo != r.OrderNo {
				t.Fatalf("winner %d: %s; entry %+v", uid, raw, g)
			}
			won++
		case http.StatusConflict:
			if g.Status != "lost" {
				t.Fatalf("loser %d: %s; entry %+v", uid, raw, g)
			}
		default:
			t.Fatalf("replay of %d after the draw: %d %s", uid, code, raw)
		}
	}
	if won != 3 {
		t.Fatalf("%d winners, want 3", won)
	}
	if rem, _, _ := e.redisStock(a.ActivityID); rem != 0 {
		t.Fatalf("remaining %d after the draw", rem)
	}
}

// checkRetryAfterDraw: an entry's 202 carries Retry-After, the whole seconds until draw_at, at
// least 1 (docs/API.md).
func checkRetryAfterDraw(t *testing.T, h http.Header, drawAt int64) {
	t.Helper()
	if ra, err := strconv.ParseInt(h.Get("Retry-After"), 10, 64); err != nil || ra < 1 ||
		ra > max(drawAt-time.Now().Unix()+1, 1) {
		t.Fatalf("Retry-After %q, want the seconds until draw_at %d", h.Get("Retry-After"), drawAt)
	}
}
