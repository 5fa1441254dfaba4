package apiserver_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/devkit/testenv"
)

// TestReservationTrace follows one reservation that arrives with a W3C traceparent through
// the real gateway, the real inventory service and Redis: the gateway's HTTP span, the
// zRPC client and server spans, the script (stock.reserve) and its EVALSHA all belong to the caller's trace,
// each span the child of the one before (the trace context crosses HTTP and zRPC).
func TestReservationTrace(t *testing.T) {
	e := startTraced(t)
	exp := testenv.RecordSpans(t)
	a := e.warm(map[string]any{"stock": 5})
	exp.Reset()

	traceID, parentID := "4bf92f3577b34da6a3ce929d0e0e4736", traceParentID
	if tp := traceReserve(t, e, a.ActivityID, traceID); !strings.Contains(tp, traceID) {
		t.Errorf("the answer's traceparent %q is not of trace %s", tp, traceID)
	}

	// The HTTP span ends after the answer is written: wait for it.
	var spans tracetest.SpanStubs
	deadline := time.Now().Add(5 * time.Second)
	for {
		spans = nil
		for _, s := range exp.GetSpans() {
			if s.SpanContext.TraceID().String() == traceID {
				spans = append(spans, s)
			}
		}
		httpSpan := func(s tracetest.SpanStub) bool {
			return s.SpanKind == oteltrace.SpanKindServer && s.Name == "/v1/seckill/orders"
		}
		if slices.ContainsFunc(spans, httpSpan) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, s := range spans {
		t.Logf("%-8s %-32s %9s  %s", s.SpanKind, s.Name, s.EndTime.Sub(s.StartTime).Round(time.Microsecond),
			attrs(s))
	}

	// The chain from the caller to the script, each span the parent of the next.
	chain := []struct {
		kind oteltrace.SpanKind
		name string
		cmd  string
	}{
		{oteltrace.SpanKindServer, "/v1/seckill/orders", ""},
		{oteltrace.SpanKindClient, "inventory.Inventory/ReserveBatch", ""},
		{oteltrace.SpanKindServer, "inventory.Inventory/ReserveBatch", ""},
		{oteltrace.SpanKindInternal, "stock.reserve", "seckill.activity_id"},
		{oteltrace.SpanKindClient, "redis", "evalsha"},
	}
	parent := parentID
	for _, link := range chain {
		i := slices.IndexFunc(spans, func(s tracetest.SpanStub) bool {
			return s.SpanKind == link.kind && s.Name == link.name && s.Parent.SpanID().String() == parent &&
				strings.Contains(attrs(s), link.cmd)
		})
		if i < 0 {
			t.Fatalf("no %s span %q (%s) under span %s in trace %s (%d spans)",
				link.kind, link.name, link.cmd, parent, traceID, len(spans))
		}
		parent = spans[i].SpanContext.SpanID().String()
	}
}

// attrs is a span's attributes as key=value text.
func attrs(s tracetest.SpanStub) string {
	var b strings.Builder
	for _, kv := range s.Attributes {
		fmt.Fprintf(&b, "%s=%s ", kv.Key, kv.Value.Emit())
	}
	return strings.TrimSpace(b.String())
}

// While go-zero's trace agent runs, the edge's fast path follows the sampling decision
// instead of sending every reservation to the route chain: a sold-out answer to a caller
// whose trace is not sampled is made fast, with no span, and carries the caller's trace;
// one to a sampled caller is made fast too, inside a server span named as the route's,
// under the caller's span, with the answer's status.
func TestFastPathFollowsSampling(t *testing.T) {
	e := startTraced(t)
	exp := testenv.RecordSpans(t)
	a, _ := sellOut(t, e, 1, nil, e)
	body := fmt.Sprintf(`{"activity_id":%d,"request_id":"sampling-0001","quantity":1}`, a.ActivityID)
	bearer := "Bearer " + buyerToken(t, 4343)
	parentID := "00f067aa0ba902b7"
	for _, c := range []struct {
		traceID string
		flags   string
	}{
		{"5bf92f3577b34da6a3ce929d0e0e4736", "00"},
		{"6bf92f3577b34da6a3ce929d0e0e4736", "01"},
	} {
		sampled := c.flags == "01"
		resp, fast := e.raw(t, bearer, body, "traceparent: 00-"+c.traceID+"-"+parentID+"-"+c.flags)
		if !fast || !strings.HasPrefix(resp, "HTTP/1.1 409 ") {
			t.Fatalf("sampled %v: fast path %v, answer\n%s", sampled, fast, resp)
		}
		if !strings.Contains(strings.ToLower(resp), "traceparent: 00-"+c.traceID+"-") ||
			!strings.Contains(resp, "-"+c.flags+"\r\n") {
			t.Errorf("sampled %v: the answer does not carry trace %s, flags %s:\n%s", sampled, c.traceID, c.flags, resp)
		}
		var spans []tracetest.SpanStub
		for _, s := range exp.GetSpans() { // the span ends before the connection closes
			if s.SpanContext.TraceID().String() == c.traceID {
				spans = append(spans, s)
			}
		}
		if !sampled {
			if len(spans) != 0 {
				t.Errorf("unsampled caller: %d spans recorded", len(spans))
			}
			continue
		}
		if len(spans) != 1 {
			t.Fatalf("sampled caller: %d spans recorded, want the route's one", len(spans))
		}
		s := spans[0]
		if s.SpanKind != oteltrace.SpanKindServer || s.Name != "/v1/seckill/orders" ||
			s.Parent.SpanID().String() != parentID || !strings.Contains(attrs(s), "http.status_code=409") {
			t.Errorf("sampled caller's span: %s %q under %s, %s", s.SpanKind, s.Name, s.Parent.SpanID(), attrs(s))
		}
	}
}
