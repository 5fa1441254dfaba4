package apiserver_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/rpc/inventory"
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

// countingInventory is an inventory service that only answers Ping, counting the calls.
type countingInventory struct {
	inventory.UnimplementedInventoryServer
	pings atomic.Int64
}

func (c *countingInventory) Ping(context.Context, *inventory.PingReq) (*inventory.PingResp, error) {
	c.pings.Add(1)
	return &inventory.PingResp{}, nil
}

// A thousand /healthz calls at once make at most a handful of dependency checks (one per
// second per gateway, shared by whoever asks meanwhile), and the answer is the status only.
func TestHealthzIsCached(t *testing.T) {
	_, keys := testenv.Redis(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	inv := &countingInventory{}
	srv := grpc.NewServer()
	inventory.RegisterInventoryServer(srv, inv)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	c := apiConfig(t, keys, l.Addr().String())
	s, err := apiserver.New(c)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	t.Cleanup(s.Stop)
	e := &env{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", c.Port), client: &http.Client{Timeout: 10 * time.Second}}
	e.waitHealthy()
	time.Sleep(1100 * time.Millisecond) // the next call checks again
	before := inv.pings.Load()
	began := time.Now()
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			for range 20 {
				if code, raw := e.do(http.MethodGet, "/healthz", "", nil); code != http.StatusOK ||
					string(raw) != `{"status":"ok"}` {
					t.Errorf("healthz: %d %s", code, raw)
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(began)
	n := inv.pings.Load() - before
	if limit := int64(took.Seconds()) + 2; n < 1 || n > limit {
		t.Fatalf("1000 /healthz calls in %v made %d Pings (want 1 to %d)", took, n, limit)
	}
	t.Logf("1000 /healthz calls in %v made %d Pings", took, n)
}
