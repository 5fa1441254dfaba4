package apiserver_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/testenv"
)

func TestHealthz(t *testing.T) {
	e := start(t)
	var h struct{ Status string }
	e.call(http.MethodGet, "/healthz", "", nil, &h)
	if h.Status != "ok" {
		t.Fatalf("healthz %+v", h)
	}
}

func TestHealthzInventoryDown(t *testing.T) {
	_, keys := testenv.Redis(t)
	// Nothing listens on the inventory endpoint.
	c := apiConfig(t, keys, fmt.Sprintf("127.0.0.1:%d", freePort(t)))
	s, err := apiserver.New(c)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	t.Cleanup(s.Stop)
	e := &env{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", c.Port), client: &http.Client{Timeout: 10 * time.Second}}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, raw := e.do(http.MethodGet, "/healthz", "", nil)
		if code != 0 {
			if code != http.StatusServiceUnavailable || !strings.Contains(string(raw), `"code":"BUSY"`) {
				t.Fatalf("got %d %s, want 503 BUSY", code, raw)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("gateway never answered")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMetrics: Prometheus metrics on go-zero's dev server (the only test that enables it:
// the dev server is process-wide).
func TestMetrics(t *testing.T) {
	port := freePort(t)
	e := start(t, func(c *apiserver.Config) {
		c.DevServer.Enabled = true
		c.DevServer.Host = "127.0.0.1"
		c.DevServer.Port = port
		c.DevServer.EnableMetrics = true
		c.DevServer.EnablePprof = false
	})
	e.expectErr(http.MethodGet, "/v1/activities/1", "", nil, http.StatusUnauthorized, "UNAUTHORIZED")
	var body string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
		if err == nil {
			raw, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			body = string(raw)
			if strings.Contains(body, "http_server_requests_duration_ms") &&
				strings.Contains(body, `seckill_api_errors_total{code="UNAUTHORIZED"}`) {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("metrics missing the gateway's series:\n%.2000s", body)
}

// TestHealthzHasItsOwnBound: the health probe's ping is bounded by its own second, not by
// the zRPC client's timeout for the sale. With that timeout at 5 ms and the inventory
// service 20 ms away (a proxy holding each answer), the gateway is healthy; the ping used to
// inherit the 5 ms and the gateway stayed 503 (TestReconcileOutlastsTheSaleTimeouts, whose
// second gateway has a 1 ms client timeout, failed "did not become healthy" on a loaded box).
func TestHealthzHasItsOwnBound(t *testing.T) {
	e := start(t)
	proxy, err := devenv.StartProxy(e.rpcHost)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	proxy.SetDelay(20 * time.Millisecond)
	c := apiConfig(t, e.keys, proxy.Addr)
	c.Inventory.Timeout = 5
	s, err := apiserver.New(c)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	t.Cleanup(s.Stop)
	far := *e
	far.base, far.api = fmt.Sprintf("http://127.0.0.1:%d", c.Port), s
	far.waitHealthy()
}
