package apiclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// A merchant call waits out a 429 RATE_LIMITED as its Retry-After says and is sent again (the
// gateway's MerchantLimit); a buyer's reservation is not (the load generator counts and retries
// those itself); a cancelled context ends the waiting.
func TestMerchantCallsWaitOutRateLimits(t *testing.T) {
	var creates, reserves, lists atomic.Int32
	limited := func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"code":"RATE_LIMITED","msg":"slow down"}`))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/admin/activities", func(w http.ResponseWriter, _ *http.Request) {
		if creates.Add(1) == 1 {
			limited(w)
			return
		}
		_, _ = w.Write([]byte(`{"activity_id":7}`))
	})
	mux.HandleFunc("POST /v1/seckill/orders", func(w http.ResponseWriter, _ *http.Request) {
		reserves.Add(1)
		limited(w)
	})
	mux.HandleFunc("GET /v1/admin/activities", func(w http.ResponseWriter, _ *http.Request) {
		lists.Add(1)
		limited(w)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := New(srv.URL, Options{})
	if a, err := c.Create(context.Background(), "m", NewActivity{Stock: 1}); err != nil || a.ActivityID != 7 ||
		creates.Load() != 2 {
		t.Fatalf("create after one 429: %+v %v, %d sends", a, err, creates.Load())
	}
	if _, _, err := c.Reserve(context.Background(), "b", ReserveBody(7, 1, "r-1")); CodeOf(err) != CodeRateLimited ||
		reserves.Load() != 1 {
		t.Fatalf("reserve: %v after %d sends, want RATE_LIMITED after 1", err, reserves.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a cancelled context ends the wait at once
	if _, err := c.List(ctx, "m", 1, 10); err == nil || lists.Load() > 1 {
		t.Fatalf("list with a cancelled context: %v after %d sends", err, lists.Load())
	}
}
