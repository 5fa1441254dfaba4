package apiserver_test

// Throughput of the gateway beside bare go-zero baselines, all in one `go test -bench`
// run on loopback. Profile (the same for every server here): go-zero Mode "test", which
// disables load shedding process-wide, CpuThreshold 0, every other default middleware on
// (trace, log at level severe, prometheus, maxconns, breaker, timeout, recover, metrics,
// maxbytes, gunzip), JWT on the buyer routes and on the echo. Only well-formed outcomes
// count: 200 with an order_no for reservations, 409 SOLD_OUT for rejections, 200 for the
// baselines; anything else is reported as "malformed" and fails the benchmark.
//
//	go test -tags no_k8s -run '^$' -bench . -benchtime 20000x ./api/apiserver/

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/rest"
	"github.com/zeromicro/go-zero/rest/httpx"
	"github.com/zeromicro/go-zero/zrpc"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

const benchWorkers = 32

type loadResult struct {
	ok, bad int64
	elapsed time.Duration
	lat     []time.Duration
}

// load sends n requests from benchWorkers keep-alive clients. good decides which
// responses count.
func load(b *testing.B, n int, req func(i int) *http.Request, good func(status int, body []byte) bool) loadResult {
	b.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		MaxIdleConnsPerHost: benchWorkers, MaxConnsPerHost: benchWorkers}}
	defer client.CloseIdleConnections()
	var next, ok, bad atomic.Int64
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	b.ResetTimer()
	begin := time.Now()
	for range benchWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				t0 := time.Now()
				resp, err := client.Do(req(i))
				if err != nil {
					bad.Add(1)
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				lat[i] = time.Since(t0)
				if good(resp.StatusCode, body) {
					ok.Add(1)
				} else {
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	r := loadResult{ok: ok.Load(), bad: bad.Load(), elapsed: time.Since(begin), lat: lat}
	b.StopTimer()
	return r
}

func (r loadResult) report(b *testing.B, unit string) {
	b.Helper()
	slices.Sort(r.lat)
	p := func(q float64) float64 { return float64(r.lat[int(q*float64(len(r.lat)-1))].Microseconds()) }
	b.ReportMetric(float64(r.ok)/r.elapsed.Seconds(), unit+"/s")
	b.ReportMetric(p(0.50), "p50-µs")
	b.ReportMetric(p(0.99), "p99-µs")
	b.ReportMetric(float64(r.bad), "malformed")
	if r.bad > 0 {
		b.Errorf("%d of %d responses were not the expected outcome", r.bad, len(r.lat))
	}
}

// benchEnv starts rpc + gateway quietly.
func benchEnv(b *testing.B, tweak ...func(*apiserver.Config)) *env {
	b.Helper()
	return start(b, tweak...)
}

// bare starts a go-zero rest server with the benchmark profile and one route.
func bare(b *testing.B, e *env, route rest.Route, jwtSecret string) string {
	b.Helper()
	c := apiConfig(b, e.keys, e.db, "unused:0")
	srv, err := rest.NewServer(c.RestConf)
	if err != nil {
		b.Fatal(err)
	}
	if jwtSecret != "" {
		srv.AddRoute(route, rest.WithJwt(jwtSecret))
	} else {
		srv.AddRoute(route)
	}
	var hs *http.Server
	var mu sync.Mutex
	go srv.StartWithOpts(func(s *http.Server) { mu.Lock(); hs = s; mu.Unlock() })
	b.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if hs != nil {
			_ = hs.Close()
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", c.Port)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(base + "/ready"); err == nil {
			resp.Body.Close()
			return base
		}
	}
	b.Fatal("bare server did not start")
	return ""
}

func post(b *testing.B, url, token string, body []byte) *http.Request {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// tokens mints one buyer token per worker slot (uids base..base+n-1).
func tokens(b *testing.B, base int64, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = buyerToken(b, base+int64(i))
	}
	return out
}

func isReserved(status int, body []byte) bool {
	return status == http.StatusOK && bytes.Contains(body, []byte(`"order_no":"`))
}

func isSoldOut(status int, body []byte) bool {
	return status == http.StatusConflict && bytes.Contains(body, []byte(`"code":"SOLD_OUT"`))
}

func is200(status int, _ []byte) bool { return status == http.StatusOK }

// BenchmarkReserve: successful reservations through the gateway, beside an HTTP
// handler with the same profile (JWT, body parse) that makes one zRPC call (Ping).
func BenchmarkReserve(b *testing.B) {
	reserveRun := func(b *testing.B, tweak ...func(*apiserver.Config)) {
		e := benchEnv(b, tweak...)
		a := e.warm(map[string]any{"stock": 1_000_000_000, "per_user_limit": 1_000_000_000})
		toks := tokens(b, 1, 256)
		url := e.base + "/v1/seckill/orders"
		r := load(b, b.N, func(i int) *http.Request {
			return post(b, url, toks[i%len(toks)], fmt.Appendf(nil,
				`{"activity_id":%d,"request_id":"bench-%012d","quantity":1}`, a.ActivityID, i))
		}, isReserved)
		r.report(b, "reserved")
	}
	b.Run("gateway", func(b *testing.B) { reserveRun(b) })
	b.Run("gateway+ratelimit", func(b *testing.B) {
		reserveRun(b, func(c *apiserver.Config) {
			c.RateLimit.Enabled, c.RateLimit.Period, c.RateLimit.Quota = true, 1, 1_000_000
		})
	})
	b.Run("echo-http-zrpc", func(b *testing.B) {
		e := benchEnv(b)
		cli := zrpc.MustNewClient(zrpc.RpcClientConf{Endpoints: []string{e.rpcAddr()}, NonBlock: true, Timeout: 2000})
		inv := inventoryclient.NewInventory(cli)
		type echoReq struct {
			ActivityId int64  `json:"activity_id"`
			Quantity   int64  `json:"quantity,default=1"`
			RequestId  string `json:"request_id"`
		}
		base := bare(b, e, rest.Route{Method: http.MethodPost, Path: "/echo", Handler: func(w http.ResponseWriter, r *http.Request) {
			var req echoReq
			if err := httpx.Parse(r, &req); err != nil {
				httpx.ErrorCtx(r.Context(), w, err)
				return
			}
			if _, err := inv.Ping(r.Context(), &inventoryclient.PingReq{}); err != nil {
				httpx.ErrorCtx(r.Context(), w, err)
				return
			}
			httpx.OkJsonCtx(r.Context(), w, map[string]any{"order_no": req.RequestId, "activity_id": req.ActivityId})
		}}, buyerSecret)
		toks := tokens(b, 1, 256)
		r := load(b, b.N, func(i int) *http.Request {
			return post(b, base+"/echo", toks[i%len(toks)], fmt.Appendf(nil,
				`{"activity_id":1,"request_id":"bench-%012d","quantity":1}`, i))
		}, isReserved)
		r.report(b, "echoed")
	})
}

// BenchmarkSoldOut: rejections of a sold-out activity through the gateway, beside a
// bare go-zero handler (same profile, no JWT, no zRPC).
func BenchmarkSoldOut(b *testing.B) {
	b.Run("gateway", func(b *testing.B) {
		e := benchEnv(b)
		a := e.warm(map[string]any{"stock": 1, "per_user_limit": 1_000_000_000})
		e.call(http.MethodPost, "/v1/seckill/orders", buyerToken(b, 999_999), reserveBody(a.ActivityID, "the-only-one", 1), nil)
		toks := tokens(b, 1, 256)
		url := e.base + "/v1/seckill/orders"
		r := load(b, b.N, func(i int) *http.Request {
			return post(b, url, toks[i%len(toks)], fmt.Appendf(nil,
				`{"activity_id":%d,"request_id":"late-%012d","quantity":1}`, a.ActivityID, i))
		}, isSoldOut)
		r.report(b, "rejected")
	})
	b.Run("bare-gozero", func(b *testing.B) {
		e := benchEnv(b)
		base := bare(b, e, rest.Route{Method: http.MethodPost, Path: "/bare", Handler: func(w http.ResponseWriter, r *http.Request) {
			httpx.OkJsonCtx(r.Context(), w, map[string]string{"code": "SOLD_OUT"})
		}}, "")
		r := load(b, b.N, func(i int) *http.Request {
			return post(b, base+"/bare", "", []byte(`{"activity_id":1,"request_id":"bare-000000000001"}`))
		}, is200)
		r.report(b, "handled")
	})
}
