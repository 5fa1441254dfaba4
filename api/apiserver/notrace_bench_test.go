package apiserver_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/zeromicro/go-zero/core/trace"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/devkit/baseline"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// BenchmarkTelemetry: one reservation (through go-zero's route chain, the zRPC call and the
// inventory service, all in this process) and one sold-out answer (the edge's fast path)
// per op, with the services' Telemetry off (etc/'s dev profile: none of go-zero's trace
// middleware, internal/telemetry) and then exporting at deploy/'s Sampler 0.1 (to a file
// exporter writing to /dev/null). allocs/op count every allocation of the process, the
// gateway's and the inventory service's. go-zero's trace agent is process-wide and never
// stops: "off" runs first, and measures the dev profile only in a binary where no test
// started the agent (-run '^$').
//
//	go test -tags no_k8s -run '^$' -bench Telemetry -benchmem ./api/apiserver/
func BenchmarkTelemetry(b *testing.B) {
	for _, on := range []bool{false, true} {
		tel := func() trace.Config { return trace.Config{Disabled: true} }
		name := "off"
		if on {
			name = "sampler-0.1"
			tel = func() trace.Config {
				return trace.Config{Name: "seckill-bench", Sampler: 0.1, Batcher: "file", Endpoint: os.DevNull}
			}
		}
		start := func(b *testing.B) *env {
			return startWith(b, func(c *rpcserver.Config) { c.Telemetry = tel() },
				func(c *apiserver.Config) { c.Telemetry = tel() })
		}
		b.Run(name+"/reserve", func(b *testing.B) {
			e := start(b)
			a := e.warm(map[string]any{"stock": 1_000_000_000, "per_user_limit": 1_000_000_000})
			toks := tokens(b, 1, 256)
			serveEach(b, e.api.Handler(), func(i int) *http.Request {
				return inProcess(b, "/v1/seckill/orders", toks[i%len(toks)], fmt.Appendf(nil,
					`{"activity_id":%d,"request_id":"tel-%t-%012d","quantity":1}`, a.ActivityID, on, i))
			}, baseline.IsReserved)
		})
		b.Run(name+"/sold-out", func(b *testing.B) {
			e := start(b)
			a := e.warm(map[string]any{"stock": 1, "per_user_limit": 1_000_000_000})
			e.call(http.MethodPost, "/v1/seckill/orders", buyerToken(b, 999_999), reserveBody(a.ActivityID, "the-only-one", 1),
				nil)
			e.expectErr(http.MethodPost, "/v1/seckill/orders", buyerToken(b, 999_998), // sets the mark
				reserveBody(a.ActivityID, "the-mark-one", 1), http.StatusConflict, "SOLD_OUT")
			toks := tokens(b, 1, 256)
			serveEach(b, e.api.Handler(), func(i int) *http.Request {
				return inProcess(b, "/v1/seckill/orders", toks[i%len(toks)], fmt.Appendf(nil,
					`{"activity_id":%d,"request_id":"late-%012d","quantity":1}`, a.ActivityID, i))
			}, baseline.IsSoldOut)
		})
	}
}

// serveEach serves b.N requests through h, one at a time, each checked by good, and reports
// allocs/op and the process's CPU time per request (cpu-ns/op).
func serveEach(b *testing.B, h http.Handler, reqs func(i int) *http.Request, good func(int, []byte) bool) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU(b)
	for i := range b.N {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, reqs(i))
		if !good(w.Code, w.Body.Bytes()) {
			b.Fatalf("request %d: %d %s", i, w.Code, w.Body.String())
		}
	}
	b.StopTimer()
	// The process's CPU time per request (every goroutine, the GC included): steadier
	// than ns/op when other processes compete for the cores.
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}
