package apiserver_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// startTraced is start with the gateway's and the inventory service's Telemetry exporting
// (testenv.Telemetry): go-zero's trace middleware and interceptors are installed.
func startTraced(t *testing.T) *env {
	t.Helper()
	tel := testenv.Telemetry()
	return startWith(t, func(c *rpcserver.Config) { c.Telemetry = tel }, func(c *apiserver.Config) { c.Telemetry = tel })
}

// With Telemetry off (etc/'s dev profile) neither go-zero's TraceHandler nor its zRPC
// trace interceptors run, even while the process's trace agent records every span: a
// reservation sent with a sampled traceparent makes no span of the gateway's route or of
// the zRPC call, and its answer carries no traceparent. The same request to services whose
// Telemetry exports is traced: the route's span under the caller's, the zRPC spans under it.
func TestNoTraceMiddlewareWithoutExporter(t *testing.T) {
	exp := testenv.RecordSpans(t)
	off, on := "7bf92f3577b34da6a3ce929d0e0e4736", "8bf92f3577b34da6a3ce929d0e0e4736"

	e := start(t)
	a := e.warm(map[string]any{"stock": 5})
	exp.Reset()
	if tp := traceReserve(t, e, a.ActivityID, off); tp != "" {
		t.Errorf("Telemetry off: the answer carries traceparent %q", tp)
	}
	for _, s := range exp.GetSpans() {
		if s.SpanContext.TraceID().String() == off || s.Name == "/v1/seckill/orders" ||
			strings.HasPrefix(s.Name, "inventory.Inventory/") {
			t.Errorf("Telemetry off: span %s %q recorded (trace %s)", s.SpanKind, s.Name, s.SpanContext.TraceID())
		}
	}

	e = startTraced(t)
	a = e.warm(map[string]any{"stock": 5})
	if tp := traceReserve(t, e, a.ActivityID, on); !strings.Contains(tp, on) {
		t.Errorf("exporting: the answer's traceparent %q is not of trace %s", tp, on)
	}
	spans := waitSpans(exp, on, "/v1/seckill/orders", oteltrace.SpanKindServer)
	// The route's server span; the zRPC call's client and server spans.
	for name, want := range map[string]int{"/v1/seckill/orders": 1, "inventory.Inventory/ReserveBatch": 2} {
		if n := countSpans(spans, name); n != want {
			t.Errorf("exporting: %d spans %q in the caller's trace, want %d (%d spans)", n, name, want, len(spans))
		}
	}
	// By now the first request's spans, had any been made, would have ended long ago.
	if n := len(traceSpans(exp, off)); n != 0 {
		t.Errorf("Telemetry off: %d spans in the caller's trace", n)
	}
}

// traceParentID is the caller's span traceReserve's traceparent names.
const traceParentID = "00f067aa0ba902b7"

// traceReserve reserves one unit of activity aid through e's gateway with a sampled
// traceparent of traceID and returns the answer's traceparent.
func traceReserve(t *testing.T, e *env, aid int64, traceID string) string {
	t.Helper()
	raw, _ := json.Marshal(reserveBody(aid, "traced-"+traceID[:8], 1))
	req, err := http.NewRequest(http.MethodPost, e.base+"/v1/seckill/orders", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+buyerToken(t, 102))
	req.Header.Set("traceparent", "00-"+traceID+"-"+traceParentID+"-01")
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reserve: %d", resp.StatusCode)
	}
	return resp.Header.Get("traceparent")
}

// waitSpans waits up to 5 s for a span name of kind in trace traceID and returns the trace's
// spans recorded by then.
func waitSpans(exp *tracetest.InMemoryExporter, traceID, name string, kind oteltrace.SpanKind) tracetest.SpanStubs {
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		spans := traceSpans(exp, traceID)
		if slices.ContainsFunc(spans, func(s tracetest.SpanStub) bool { return s.Name == name && s.SpanKind == kind }) ||
			time.Now().After(deadline) {
			return spans
		}
	}
}

// traceSpans are the spans of trace traceID recorded so far.
func traceSpans(exp *tracetest.InMemoryExporter, traceID string) tracetest.SpanStubs {
	var spans tracetest.SpanStubs
	for _, s := range exp.GetSpans() {
		if s.SpanContext.TraceID().String() == traceID {
			spans = append(spans, s)
		}
	}
	return spans
}

// countSpans is how many of spans are named name.
func countSpans(spans tracetest.SpanStubs, name string) int {
	n := 0
	for _, s := range spans {
		if s.Name == name {
			n++
		}
	}
	return n
}
