package apiserver_test

import (
	"net/http"
	"testing"
)

// A replayed request id reports the order as it is now: paid after a pay, cancelled
// after a cancel (with the current remaining), and nothing is deducted again.
func TestReplayReportsTheOrderAsItIsNow(t *testing.T) {
	e := start(t)
	a := e.warm(map[string]any{"stock": 5, "per_user_limit": 2, "pay_timeout_seconds": 600})
	for _, tc := range []struct {
		action, want string
		uid          int64
		remaining    int64 // after the replay
	}{
		{"pay", "paid", 300, 4},
		{"cancel", "cancelled", 301, 4}, // the cancelled unit is back
	} {
		t.Run(tc.want, func(t *testing.T) {
			tok := buyerToken(t, tc.uid)
			body := reserveBody(a.ActivityID, "replay-"+tc.want, 1)
			var first, again reserved
			e.call(http.MethodPost, "/v1/seckill/orders", tok, body, &first)
			if first.Status != "reserved" {
				t.Fatalf("first: %+v", first)
			}
			e.call(http.MethodPost, "/v1/seckill/orders/"+first.OrderNo+"/"+tc.action, tok, nil, nil)
			e.call(http.MethodPost, "/v1/seckill/orders", tok, body, &again)
			if again.OrderNo != first.OrderNo || again.Status != tc.want || again.Quantity != 1 ||
				again.ExpireAt != first.ExpireAt || again.Remaining != tc.remaining {
				t.Fatalf("replay after %s: %+v, want the same order %s, status %s, remaining %d",
					tc.action, again, first.OrderNo, tc.want, tc.remaining)
			}
			if rem, _, _ := e.redisStock(a.ActivityID); rem != tc.remaining {
				t.Fatalf("remaining %d after the replay, want %d", rem, tc.remaining)
			}
		})
	}
}
