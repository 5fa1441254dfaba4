package apiserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/api/internal/reply"
)

// doFrom sends a request as from the client address addr (the X-Real-IP header, which
// the gateway trusts when ClientIPHeader names it).
func (e *env) doFrom(addr, method, path, authorization string, body any) (int, errBody) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.base+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Real-IP", addr)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	var eb errBody
	_ = json.Unmarshal(out, &eb)
	return resp.StatusCode, eb
}

func addrLimited(quota, authFails int) func(*apiserver.Config) {
	return func(c *apiserver.Config) {
		c.AddrLimit.Enabled = true
		c.AddrLimit.ClientIPHeader = "X-Real-IP"
		c.AddrLimit.TrustedProxies = []string{"127.0.0.1"} // the tests' client stands for a proxy
		c.AddrLimit.Period, c.AddrLimit.ReserveQuota = 60, quota
		c.AddrLimit.AuthFailPeriod, c.AddrLimit.AuthFailQuota = 60, authFails
	}
}

// Many buyers behind one address share its reservation quota; another address has its own.
func TestPerAddressReservationLimit(t *testing.T) {
	e := start(t, addrLimited(4, 1000))
	a := e.warm(map[string]any{"stock": 100})
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ { // ten distinct buyers, concurrently, from one address
		wg.Add(1)
		go func(uid int64) {
			defer wg.Done()
			code, eb := e.doFrom("10.1.1.1", http.MethodPost, "/v1/seckill/orders", "Bearer "+buyerToken(t, uid),
				reserveBody(a.ActivityID, fmt.Sprintf("addr-limit-%d", uid), 1))
			if code == http.StatusTooManyRequests && eb.Code != "RATE_LIMITED" {
				t.Errorf("429 with code %q", eb.Code)
			}
			mu.Lock()
			codes[code]++
			mu.Unlock()
		}(int64(100 + i))
	}
	wg.Wait()
	if codes[http.StatusOK] != 4 || codes[http.StatusTooManyRequests] != 6 {
		t.Fatalf("from one address: %v, want 4 reserved and 6 rate limited", codes)
	}
	if n := e.orderCount(a.ActivityID); n != 4 {
		t.Fatalf("%d orders, want 4: a limited request reached the service", n)
	}
	if code, eb := e.doFrom("10.1.1.2", http.MethodPost, "/v1/seckill/orders", "Bearer "+buyerToken(t, 200),
		reserveBody(a.ActivityID, "addr-limit-other", 1)); code != http.StatusOK {
		t.Fatalf("another address: %d %+v", code, eb)
	}
	// Other routes are not counted against the reservation quota.
	if code, eb := e.doFrom("10.1.1.1", http.MethodGet, fmt.Sprintf("/v1/activities/%d", a.ActivityID),
		"Bearer "+buyerToken(t, 100), nil); code != http.StatusOK {
		t.Fatalf("a read from the limited address: %d %+v", code, eb)
	}
}

type lines struct {
	logx.Writer
	mu  sync.Mutex
	all []string
}

func (l *lines) Error(v any, f ...logx.LogField) { l.add(v) }
func (l *lines) Info(v any, f ...logx.LogField)  { l.add(v) }
func (l *lines) add(v any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, fmt.Sprint(v))
}

// captureLogs captures the log lines at info level until the test ends: the gateway's
// writer chain with the capture under its redaction, as it runs.
func captureLogs(t *testing.T) *lines {
	capture := &lines{}
	prev := logx.Reset()
	capture.Writer = prev
	logx.SetWriter(capture)
	reply.RedactLogs()
	logx.SetLevel(logx.InfoLevel)
	t.Cleanup(func() { logx.SetLevel(logx.SevereLevel); logx.Reset(); logx.SetWriter(prev) })
	return capture
}

// Failed authentications are limited per address, and each 401 is one log line without
// the request's headers or body.
func TestPerAddressFailedAuthLimit(t *testing.T) {
	e := start(t, addrLimited(1000, 3))
	a := e.warm(nil)
	capture := captureLogs(t)

	path := "/v1/seckill/orders"
	body := map[string]any{
		"activity_id": a.ActivityID,
		"request_id":  "auth-flood-0001",
		"flood":       strings.Repeat("B", 2000),
	}
	for i := 0; i < 4; i++ { // 3 within the quota, the 4th goes over it
		if code, eb := e.doFrom("10.2.2.2", http.MethodPost, path, "Bearer not.a.token",
			body); code != http.StatusUnauthorized {
			t.Fatalf("bad token %d: %d %+v", i, code, eb)
		}
	}
	// Over the quota: refused before the JWT check, even with a valid token.
	if code, eb := e.doFrom("10.2.2.2", http.MethodPost, path, "Bearer "+buyerToken(t, 1),
		reserveBody(a.ActivityID, "auth-flood-0002", 1)); code != http.StatusTooManyRequests ||
		eb.Code != "RATE_LIMITED" {
		t.Fatalf("blocked address: %d %+v, want 429 RATE_LIMITED", code, eb)
	}
	// Another address is not affected.
	if code, eb := e.doFrom("10.2.2.3", http.MethodPost, path, "Bearer "+buyerToken(t, 1),
		reserveBody(a.ActivityID, "auth-flood-0003", 1)); code != http.StatusOK {
		t.Fatalf("other address: %d %+v", code, eb)
	}
	capture.mu.Lock()
	defer capture.mu.Unlock()
	n := 0
	for _, l := range capture.all {
		if strings.Contains(l, "BBBB") || strings.Contains(l, "not.a.token") ||
			strings.Contains(l, "authorize failed") {
			t.Errorf("a 401 logged its request: %.200q", l)
		}
		if strings.HasPrefix(l, "unauthorized: POST "+path) {
			n++
		}
	}
	if n != 4 {
		t.Fatalf("%d log lines for 4 401s, want 4: %q", n, capture.all)
	}
}

// A limiter whose Redis is down does what LimiterFailure says.
func TestLimiterFailurePolicy(t *testing.T) {
	counter := func() float64 {
		mfs, _ := prometheus.DefaultGatherer.Gather()
		var sum float64
		for _, mf := range mfs {
			if mf.GetName() == "seckill_api_limiter_failures_total" {
				for _, m := range mf.GetMetric() {
					sum += m.GetCounter().GetValue()
				}
			}
		}
		return sum
	}
	for _, policy := range []string{"closed", "open"} {
		t.Run(policy, func(t *testing.T) {
			e := start(t, addrLimited(100, 100), func(c *apiserver.Config) {
				c.RateLimit.Enabled = true
				c.AddrLimit.ReserveShared = true // counted in Redis too: the limiter that fails
				c.Redis.Host = "127.0.0.1:1"     // nothing listens there
				c.LimiterFailure = policy
			})
			a := e.warm(nil)
			before := counter()
			code, eb := e.doFrom(
				"10.3.3.3",
				http.MethodPost,
				"/v1/seckill/orders",
				"Bearer "+buyerToken(t, 5),
				reserveBody(a.ActivityID, "limiter-down-01", 1),
			)
			switch policy {
			case "closed":
				if code != http.StatusServiceUnavailable || eb.Code != "BUSY" || e.orderCount(a.ActivityID) != 0 {
					t.Fatalf("closed: %d %+v, %d orders", code, eb, e.orderCount(a.ActivityID))
				}
			case "open":
				if code != http.StatusOK || e.orderCount(a.ActivityID) != 1 {
					t.Fatalf("open: %d %+v", code, eb)
				}
			}
			if counter() <= before {
				t.Fatalf("seckill_api_limiter_failures_total not counted")
			}
		})
	}
}
