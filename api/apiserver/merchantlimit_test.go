package apiserver_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/seckill/seckill/api/apiserver"
)

// A merchant's writes and heavy reads are bounded across gateways (counted in Redis): past
// the quota, 429 RATE_LIMITED with Retry-After = the period; another merchant and the
// merchant's cheap reads are not affected.
func TestMerchantLimitAcrossGateways(t *testing.T) {
	limited := func(c *apiserver.Config) {
		c.MerchantLimit.Enabled, c.MerchantLimit.Period, c.MerchantLimit.Quota = true, 60, 5
	}
	e := start(t, limited)
	g := e.gateway(limited)
	a := e.create(nil) // 1 of 5
	warm := fmt.Sprintf("/v1/admin/activities/%d/warmup", a.ActivityID)
	for i := range 3 { // 2, 3, 4 of 5: alternating gateways
		gw := []*env{g, e}[i%2]
		if code, raw := gw.do(http.MethodPost, warm, merchantToken(t, merchantID), nil); code != http.StatusOK {
			t.Fatalf("warmup %d: %d %s", i, code, raw)
		}
	}
	recon := fmt.Sprintf("/v1/admin/activities/%d/reconcile", a.ActivityID) // 5 of 5: a heavy read
	if code, raw := g.do(http.MethodGet, recon, merchantToken(t, merchantID), nil); code != http.StatusOK {
		t.Fatalf("reconcile: %d %s", code, raw)
	}
	for _, gw := range []*env{e, g} {
		code, raw, h := gw.doWithHeaders(http.MethodPost, warm, merchantToken(t, merchantID), nil)
		if code != http.StatusTooManyRequests || h.Get("Retry-After") != "60" {
			t.Fatalf("past the quota: %d %s Retry-After %q; want 429 and 60", code, raw, h.Get("Retry-After"))
		}
	}
	g.expectErr(http.MethodGet, recon, merchantToken(t, merchantID), nil, http.StatusTooManyRequests, "RATE_LIMITED")
	orders := fmt.Sprintf("/v1/admin/activities/%d/orders", a.ActivityID)
	resp := e.getCSV(orders, merchantToken(t, merchantID)) // an orders export is a heavy read
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("an orders export past the quota: %d, want 429", resp.StatusCode)
	}
	var v map[string]any // a cheap read is not counted: the activity, a page of its orders
	e.call(http.MethodGet, fmt.Sprintf("/v1/admin/activities/%d", a.ActivityID), merchantToken(t, merchantID), nil, &v)
	e.call(http.MethodGet, orders, merchantToken(t, merchantID), nil, &v)
	if code, raw := e.do(http.MethodPost, "/v1/admin/activities", merchantToken(t, merchantID+1),
		map[string]any{"sku_id": 1, "name": "other", "stock": 1, "start_time": 1, "end_time": 2}); code == 429 {
		t.Fatalf("another merchant was limited: %s", raw)
	}
}

// Every 503 carries Retry-After (here BUSY: the inventory service is gone), and so does a 429.
func TestRetryAfterOnBusyAndRateLimited(t *testing.T) {
	e := start(t, func(c *apiserver.Config) { c.RateLimit.Enabled, c.RateLimit.Quota = true, 1 })
	a := e.warm(map[string]any{"stock": 5, "per_user_limit": 5})
	header := func(body map[string]any) (int, string) {
		code, _, h := e.doWithHeaders(http.MethodPost, "/v1/seckill/orders", buyerToken(t, 42), body)
		return code, h.Get("Retry-After")
	}
	if code, _ := header(reserveBody(a.ActivityID, "first-of-one", 1)); code != http.StatusOK {
		t.Fatalf("first reservation: %d", code)
	}
	if code, ra := header(reserveBody(a.ActivityID, "second-of-one", 1)); code != 429 || ra != "1" {
		t.Fatalf("over the buyer's rate: %d Retry-After %q, want 429 and 1", code, ra)
	}
	e.rpc.Stop()
	code, ra := header(reserveBody(a.ActivityID, "no-service-1", 1))
	for i := 0; code == 429 && i < 50; i++ { // wait out the buyer's 1 s window
		time.Sleep(50 * time.Millisecond)
		code, ra = header(reserveBody(a.ActivityID, fmt.Sprintf("no-service-%d", i+2), 1))
	}
	if code != http.StatusServiceUnavailable || ra != "1" {
		t.Fatalf("inventory gone: %d Retry-After %q, want 503 and 1", code, ra)
	}
}
