package apiserver_test

// Throughput of the gateway beside bare go-zero baselines, all in one `go test -bench`
// run on loopback. Profile (the same for every server here): go-zero Mode "test", which
// disables load shedding process-wide, CpuThreshold 0, every other default middleware on
// (log at level severe, prometheus, maxconns, breaker, timeout, recover, metrics, maxbytes,
// gunzip; trace in the baselines only: with Telemetry off the gateway installs none of
// go-zero's trace middleware), JWT on the buyer routes and on the echo. Only well-formed outcomes
// count (devkit/baseline): 200 with an order_no for reservations and the echo, 409
// SOLD_OUT for rejections, 200 {"code":"SOLD_OUT"} for the bare handler; anything else is
// reported as "malformed" and fails the benchmark. The baseline servers and the load
// driver are devkit/baseline, shared with `make bench`.
//
//	go test -tags no_k8s -run '^$' -bench . -benchtime 20000x ./api/apiserver/

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/rest"
	"github.com/zeromicro/go-zero/zrpc"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/devkit/baseline"
)

const benchWorkers = 32

type loadResult struct {
	ok, bad int64
	elapsed time.Duration
	lat     []time.Duration
}

// load sends n requests from benchWorkers keep-alive clients (baseline.Load, the driver
// `make bench` uses too). good decides which responses count.
func load(b *testing.B, n int, base string, req func(i int) baseline.Request,
	good func(status int, body []byte) bool) loadResult {
	b.Helper()
	b.ResetTimer()
	r := baseline.Load(context.Background(), baseline.LoadConfig{Concurrency: benchWorkers, Requests: n}, base,
		func(i int) (baseline.Request, error) { return req(i), nil }, good)
	b.StopTimer()
	return loadResult{ok: int64(r.Good), bad: int64(r.OtherCount() + r.NotSent), elapsed: r.Elapsed, lat: r.Latencies}
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

// baselineConf is the gateway's middleware profile for a baseline server.
func baselineConf(b *testing.B, e *env) rest.RestConf {
	c := apiConfig(b, e.keys, "unused:0").RestConf
	c.Port = 0
	return c
}

// serving fails the benchmark when a baseline server did not start, and stops it at the end.
func serving(b *testing.B, s *baseline.Server, err error) string {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	return s.URL
}

// post is a JSON POST of body to path with token ("" none).
func post(path, token string, body []byte) baseline.Request {
	return baseline.Request{Method: http.MethodPost, Path: path, Token: token, Body: body}
}

// tokens mints one buyer token per worker slot (uids base..base+n-1).
func tokens(b *testing.B, base int64, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = buyerToken(b, base+int64(i))
	}
	return out
}

// BenchmarkReserve: successful reservations through the gateway, beside an HTTP
// handler with the same profile (JWT, body parse) that makes one zRPC call (Ping).
func BenchmarkReserve(b *testing.B) {
	reserveRun := func(b *testing.B, tweak ...func(*apiserver.Config)) {
		e := benchEnv(b, tweak...)
		a := e.warm(map[string]any{"stock": 1_000_000_000, "per_user_limit": 1_000_000_000})
		toks := tokens(b, 1, 256)
		r := load(b, b.N, e.base, func(i int) baseline.Request {
			return post("/v1/seckill/orders", toks[i%len(toks)], fmt.Appendf(nil,
				`{"activity_id":%d,"request_id":"bench-%012d","quantity":1}`, a.ActivityID, i))
		}, baseline.IsReserved)
		r.report(b, "reserved")
	}
	b.Run("gateway", func(b *testing.B) { reserveRun(b) })
	// Reservations coalesced per activity (docs/DESIGN.md "Coalesced reservations").
	b.Run("gateway+coalesce", func(b *testing.B) {
		reserveRun(b, func(c *apiserver.Config) { c.Coalesce.Enabled = true })
	})
	b.Run("gateway+ratelimit", func(b *testing.B) {
		reserveRun(b, func(c *apiserver.Config) {
			c.RateLimit.Enabled, c.RateLimit.Period, c.RateLimit.Quota = true, 1, 1_000_000
		})
	})
	b.Run("gateway+addrlimit", func(b *testing.B) {
		reserveRun(b, func(c *apiserver.Config) {
			c.AddrLimit.Enabled, c.AddrLimit.Period, c.AddrLimit.ReserveQuota = true, 1, 1_000_000
		})
	})
	b.Run("echo-http-zrpc", func(b *testing.B) {
		e := benchEnv(b)
		echo, err := baseline.StartEcho(baselineConf(b, e), buyerSecret,
			zrpc.RpcClientConf{Endpoints: []string{e.rpcAddr()}, NonBlock: true, Timeout: 2000})
		base := serving(b, echo, err)
		toks := tokens(b, 1, 256)
		r := load(b, b.N, base, func(i int) baseline.Request {
			return post(baseline.EchoPath, toks[i%len(toks)], fmt.Appendf(nil,
				`{"activity_id":1,"request_id":"bench-%012d","quantity":1}`, i))
		}, baseline.IsReserved)
		r.report(b, "echoed")
	})
}

// soldOneUnit starts a gateway with an activity of one unit, sold.
func soldOneUnit(b *testing.B) (*env, activity) {
	e := benchEnv(b)
	a := e.warm(map[string]any{"stock": 1, "per_user_limit": 1_000_000_000})
	e.call(http.MethodPost, "/v1/seckill/orders", buyerToken(b, 999_999), reserveBody(a.ActivityID, "the-only-one", 1),
		nil)
	return e, a
}

// BenchmarkSoldOut: rejections of a sold-out activity through the gateway, beside a
// bare go-zero handler (same profile, no JWT, no zRPC).
func BenchmarkSoldOut(b *testing.B) {
	b.Run("gateway", func(b *testing.B) {
		e, a := soldOneUnit(b)
		toks := tokens(b, 1, 256)
		r := load(b, b.N, e.base, func(i int) baseline.Request {
			return post("/v1/seckill/orders", toks[i%len(toks)], fmt.Appendf(nil,
				`{"activity_id":%d,"request_id":"late-%012d","quantity":1}`, a.ActivityID, i))
		}, baseline.IsSoldOut)
		r.report(b, "rejected")
	})
	b.Run("bare-gozero", func(b *testing.B) {
		e := benchEnv(b)
		bare, err := baseline.StartBare(baselineConf(b, e))
		base := serving(b, bare, err)
		r := load(b, b.N, base, func(i int) baseline.Request {
			return post(baseline.BarePath, "", []byte(`{"activity_id":1,"request_id":"bare-000000000001"}`))
		}, baseline.IsBare)
		r.report(b, "handled")
	})
}

// BenchmarkSoldOutHandler: the server's work per sold-out rejection, in process (each
// request served by the gateway's whole http.Handler: go-zero's middleware chain, the
// router, the routes; no network, no client), beside the bare go-zero handler's. On a
// noisy machine its cpu-ns/op (the process's CPU time per request) and allocs/op are
// steadier than a loopback load run's rate; they exclude the syscalls and client work a
// load run adds to both sides (the tokens are minted before the timed loop).
//
//	go test -tags no_k8s -run '^$' -bench SoldOutHandler -benchmem ./api/apiserver/
func BenchmarkSoldOutHandler(b *testing.B) {
	soldOut := func(b *testing.B) (*env, int64) {
		e, a := soldOneUnit(b)
		// One rejection through the inventory service sets the mark.
		e.expectErr(
			http.MethodPost,
			"/v1/seckill/orders",
			buyerToken(b, 999_998),
			reserveBody(a.ActivityID, "the-mark-one", 1),
			http.StatusConflict,
			"SOLD_OUT",
		)
		return e, a.ActivityID
	}
	gateway := func(b *testing.B, toks []string) {
		e, aid := soldOut(b)
		h := e.api.Handler()
		serveEach(b, h, func(i int) *http.Request {
			return inProcess(b, "/v1/seckill/orders", toks[i%len(toks)], fmt.Appendf(nil,
				`{"activity_id":%d,"request_id":"late-%012d","quantity":1}`, aid, i))
		}, baseline.IsSoldOut)
	}
	// Every request a new buyer's token (make bench's sold-out rows: one attempt per buyer).
	b.Run("gateway-distinct-tokens", func(b *testing.B) { gateway(b, tokens(b, 1_000_000, b.N)) })
	// 256 buyers retrying (plain tokens: verified by fastHS256 at each request, not cached).
	b.Run("gateway-repeated-tokens", func(b *testing.B) { gateway(b, tokens(b, 1, 256)) })
	b.Run("bare-gozero", func(b *testing.B) {
		e := benchEnv(b)
		bare, err := baseline.StartBare(baselineConf(b, e))
		serving(b, bare, err)
		h := bare.Handler()
		toks := tokens(b, 1, 256)
		serveEach(b, h, func(i int) *http.Request {
			return inProcess(
				b,
				baseline.BarePath,
				toks[i%len(toks)],
				[]byte(`{"activity_id":1,"request_id":"bare-000000000001","quantity":1}`),
			)
		}, baseline.IsBare)
	})
}

// inProcess is a request as net/http's server hands it to the handler.
func inProcess(b *testing.B, path, token string, body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r.RemoteAddr = "127.0.0.1:40000"
	r.Header.Set("Content-Type", "application/json")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

// processCPU is the CPU time (user + system) this process used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
