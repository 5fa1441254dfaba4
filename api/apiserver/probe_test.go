package apiserver_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v4"

	"github.com/seckill/seckill/api/apiserver"
)

// The probes of issue 23, each sent to a real gateway.

// send sends body with the headers given (name, value pairs) and returns status, headers
// and body.
func (e *env) send(method, path string, body []byte, headers ...string) (int, http.Header, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.base+path, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, out
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A gzip body is limited by its inflated size, and no error message echoes unbounded input.
func TestGzipBodyLimitCountsInflatedBytes(t *testing.T) {
	e := start(t)
	a := e.warm(map[string]any{"stock": 10, "per_user_limit": 5})
	auth := "Bearer " + buyerToken(t, 601)
	bomb := fmt.Appendf(nil, `{"activity_id":%d,"request_id":"gzip-bomb-0001"%s}`, a.ActivityID,
		strings.Repeat(" ", 8<<20))
	z := gzipped(t, bomb)
	code, _, raw := e.send(http.MethodPost, "/v1/seckill/orders", z, "Content-Type", "application/json",
		"Content-Encoding", "gzip", "Authorization", auth)
	var eb errBody
	_ = json.Unmarshal(raw, &eb)
	if code != http.StatusRequestEntityTooLarge || eb.Code != "PAYLOAD_TOO_LARGE" {
		t.Errorf("%d-byte gzip of %d bytes: %d %.200s, want 413 PAYLOAD_TOO_LARGE", len(z), len(bomb), code, raw)
	}
	if n := e.orderCount(a.ActivityID); n != 0 {
		t.Errorf("the bomb reserved: %d orders", n)
	}
	// Under the limit, a bad value is named, not echoed whole.
	long := fmt.Appendf(nil, `{"activity_id":"%s","request_id":"gzip-echo-0001"}`, strings.Repeat("A", 60<<10))
	for name, body := range map[string][]byte{"plain": long, "gzip": gzipped(t, long)} {
		headers := []string{"Content-Type", "application/json", "Authorization", auth}
		if name == "gzip" {
			headers = append(headers, "Content-Encoding", "gzip")
		}
		code, _, raw := e.send(http.MethodPost, "/v1/seckill/orders", body, headers...)
		eb = errBody{}
		_ = json.Unmarshal(raw, &eb)
		if code != http.StatusBadRequest || eb.Code != "INVALID_ARGUMENT" || len(eb.Msg) > 512 {
			t.Errorf("%s: %d %s with a %d-byte message, want 400 INVALID_ARGUMENT with at most 512", name, code,
				eb.Code, len(eb.Msg))
		}
	}
}

// A token signed with the right secret by another HMAC than HS256 is refused on every path.
func TestTokenOnlyHS256(t *testing.T) {
	e := start(t)
	a := e.warm(nil)
	sign := func(m jwt.SigningMethod, secret string, claims jwt.MapClaims) string {
		claims["exp"] = time.Now().Add(time.Hour).Unix()
		claims["iat"] = time.Now().Unix()
		tok, err := jwt.NewWithClaims(m, claims).SignedString([]byte(secret))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	for _, m := range []jwt.SigningMethod{jwt.SigningMethodHS384, jwt.SigningMethodHS512} {
		for range 2 { // a second time: from no cache either
			buyer := sign(m, buyerSecret, jwt.MapClaims{"uid": 42})
			if code, _, raw := e.send(http.MethodGet, fmt.Sprintf("/v1/activities/%d", a.ActivityID), nil,
				"Authorization", "Bearer "+buyer); code != http.StatusUnauthorized {
				t.Errorf("buyer %s: %d %s, want 401", m.Alg(), code, raw)
			}
		}
		merchant := sign(m, merchantSecret, jwt.MapClaims{"mid": merchantID})
		if code, _, raw := e.send(http.MethodGet, fmt.Sprintf("/v1/admin/activities/%d", a.ActivityID), nil,
			"Authorization", "Bearer "+merchant); code != http.StatusUnauthorized {
			t.Errorf("merchant %s: %d %s, want 401", m.Alg(), code, raw)
		}
	}
}

// The per-address limit counts the path as routed: a trailing slash is the same route.
func TestAddrLimitKeyedByCleanPath(t *testing.T) {
	e := start(t, addrLimited(1, 1000))
	a := e.warm(map[string]any{"stock": 10, "per_user_limit": 5})
	for i, path := range []string{"/v1/seckill/orders", "/v1/seckill/orders/", "//v1/seckill/orders"} {
		code, eb := e.doFrom("10.3.3.3", http.MethodPost, path, "Bearer "+buyerToken(t, 700+int64(i)),
			reserveBody(a.ActivityID, fmt.Sprintf("slash-%08d", i), 1))
		if want := http.StatusTooManyRequests; i > 0 && code != want {
			t.Errorf("%s after the quota: %d %+v, want 429", path, code, eb)
		}
	}
}

// A forwarding header names the client only when the request comes from a configured proxy.
func TestClientAddrOnlyFromTrustedProxies(t *testing.T) {
	untrusted := func(c *apiserver.Config) { addrLimited(1, 1000)(c); c.AddrLimit.TrustedProxies = nil }
	e := start(t, untrusted)
	a := e.warm(map[string]any{"stock": 10, "per_user_limit": 5})
	// From 127.0.0.1, not a proxy: every X-Real-IP is the same client.
	for i, addr := range []string{"10.4.4.1", "10.4.4.2"} {
		code, eb := e.doFrom(addr, http.MethodPost, "/v1/seckill/orders", "Bearer "+buyerToken(t, 800+int64(i)),
			reserveBody(a.ActivityID, fmt.Sprintf("proxy-%08d", i), 1))
		if i == 1 && code != http.StatusTooManyRequests {
			t.Errorf("a spoofed X-Real-IP got its own quota: %d %+v", code, eb)
		}
	}
	// Through a configured proxy, X-Forwarded-For's last untrusted address is the client.
	g := e.gateway(func(c *apiserver.Config) {
		addrLimited(1, 1000)(c)
		c.AddrLimit.ClientIPHeader = "X-Forwarded-For"
	})
	for i, xff := range []string{"10.5.5.1", "6.6.6.6, 10.5.5.2", "10.5.5.2"} {
		code, _, raw := g.send(http.MethodPost, "/v1/seckill/orders",
			fmt.Appendf(nil, `{"activity_id":%d,"request_id":"xff-%08d"}`, a.ActivityID, i),
			"Content-Type", "application/json", "X-Forwarded-For", xff, "Authorization", "Bearer "+buyerToken(t, 810))
		if want := []int{200, 200, 429}[i]; code != want {
			t.Errorf("X-Forwarded-For %q: %d %s, want %d", xff, code, raw, want)
		}
	}
}

// Nothing a client sends starts a log line.
func TestClientInputCannotStartALogLine(t *testing.T) {
	e := start(t)
	capture := captureLogs(t)
	code, _, _ := e.send(http.MethodGet, "/v1/seckill/orders/1-x%0aFAKE%20LINE%0d", nil, "Authorization", "Bearer x")
	if code != http.StatusUnauthorized {
		t.Fatalf("probe: %d, want 401", code)
	}
	capture.mu.Lock()
	defer capture.mu.Unlock()
	found := false
	for _, l := range capture.all {
		if strings.Contains(l, "FAKE LINE") {
			found = true
			if strings.ContainsAny(l, "\n\r") {
				t.Errorf("a control character from the client was logged as is: %q", l)
			}
		}
	}
	if !found {
		t.Fatalf("the probe was not logged: %q", capture.all)
	}
}

// The console is sent with a content security policy and may not be framed.
func TestConsoleSecurityHeaders(t *testing.T) {
	e := start(t)
	for _, path := range []string{"/console/", "/console/app.js"} {
		code, h, _ := e.send(http.MethodGet, path, nil)
		csp := h.Get("Content-Security-Policy")
		if code != http.StatusOK || !strings.Contains(csp, "default-src 'self'") ||
			!strings.Contains(csp, "frame-ancestors 'none'") || h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: %d CSP %q X-Frame-Options %q", path, code, csp, h.Get("X-Frame-Options"))
		}
	}
}

// Reads, pay and cancel are limited per buyer.
func TestPerUserLimitsOnReadsAndChanges(t *testing.T) {
	e := start(t, func(c *apiserver.Config) {
		c.RateLimit.Enabled, c.RateLimit.Period, c.RateLimit.Quota = true, 60, 1000
		c.RateLimit.ReadQuota, c.RateLimit.ChangeQuota = 2, 1
	})
	a := e.warm(nil)
	tok := buyerToken(t, 900)
	path := fmt.Sprintf("/v1/activities/%d", a.ActivityID)
	for i := range 3 {
		code, _, raw := e.send(http.MethodGet, path, nil, "Authorization", "Bearer "+tok)
		if want := []int{200, 200, 429}[i]; code != want || (i == 2 && !bytes.Contains(raw, []byte("RATE_LIMITED"))) {
			t.Errorf("read %d: %d %s, want %d", i, code, raw, want)
		}
	}
	order := "/v1/seckill/orders/" + fmt.Sprint(a.ActivityID) + "-17000000000000000000"
	for i, suffix := range []string{"/pay", "/cancel"} {
		code, _, raw := e.send(http.MethodPost, order+suffix, nil, "Authorization", "Bearer "+tok)
		if i == 1 && (code != http.StatusTooManyRequests || !bytes.Contains(raw, []byte("RATE_LIMITED"))) {
			t.Errorf("change %d: %d %s, want 429 RATE_LIMITED", i, code, raw)
		}
	}
	if code, _, raw := e.send(http.MethodGet, path, nil, "Authorization", "Bearer "+buyerToken(t, 901)); code != 200 {
		t.Errorf("another buyer's read: %d %s", code, raw)
	}
}
