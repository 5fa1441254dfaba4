package pipelinetest_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/conf"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/devkit/pipelinetest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/authtoken"
	"github.com/seckill/seckill/rpc/rpcserver"
)

const traceBuyerSecret = "trace-buyer-5d1e9a7c3b8f2e6a0c4d7b1f9e3a5c8d"

// gateway starts a gateway in front of the pipeline's inventory service and returns its
// base URL.
func gateway(t *testing.T, p *pipelinetest.Pipeline) string {
	t.Helper()
	var c apiserver.Config
	if err := conf.FillDefault(&c); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.Port = l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	c.Name, c.Host, c.Mode = "seckill-api.trace-test", "127.0.0.1", "test"
	c.Log.Level, c.Log.Stat, c.DevServer.Enabled = "severe", false, false
	c.BuyerAuth.AccessSecret = traceBuyerSecret
	c.MerchantAuth.AccessSecret = "trace-merchant-8b2f4e6a1c3d5f7e9a0b2c4d6e8f1a3b"
	c.Inventory.Endpoints = []string{p.RPC.ListenOn}
	c.Redis = testenv.RedisConf()
	c.Redis.Host = p.Redis.Addr
	c.KeyPrefix = p.Keys.Prefix
	c.RateLimit.Enabled, c.AddrLimit.Enabled = false, false
	c.Telemetry = testenv.Telemetry() // go-zero's trace middleware and interceptors on
	s, err := apiserver.New(c)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	t.Cleanup(s.Stop)
	base := fmt.Sprintf("http://127.0.0.1:%d", c.Port)
	gw := apiclient.New(base, apiclient.Options{Conns: 1, Timeout: 5 * time.Second})
	defer gw.Close()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := gw.Healthz(context.Background()); err == nil {
			return base
		}
		if time.Now().After(deadline) {
			t.Fatal("gateway did not become healthy")
		}
	}
}

// traced is a client of the gateway at base sending every request in trace traceID.
func traced(base, traceID string) *apiclient.Client {
	return apiclient.New(base, apiclient.Options{Conns: 1}).WithHeader(http.Header{
		"Traceparent": {"00-" + traceID + "-00f067aa0ba902b7-01"}})
}

// TestReservationTraceReachesTheWriter follows one reservation and then its pay, each in a
// trace of its own, through the gateway, the inventory service (acknowledged once in
// Kafka), kfake and the writer: each trace holds every span from the HTTP handler to the
// script, the produce and, under it, the writer's kafka.consume (only the traceparent header
// carries the trace across Kafka); the writer's transaction span (writer.apply), parent of its
// MySQL spans, is the child of one consume span and links to the other when both events
// share a transaction.
func TestReservationTraceReachesTheWriter(t *testing.T) {
	p := pipelinetest.Start(t, pipelinetest.Options{Inventory: func(c *rpcserver.Config) {
		c.Telemetry = testenv.Telemetry()
	}})
	base := gateway(t, p)
	exp := testenv.RecordSpans(t)
	aid := p.Activity(10, 2, 600, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	token, err := authtoken.Buyer(traceBuyerSecret, 42, time.Hour)
	if err != nil {
		t.Fatal(err)
	}

	reserveTrace, payTrace := "4bf92f3577b34da6a3ce929d0e0e4736", "5cf92f3577b34da6a3ce929d0e0e4737"
	order, m, err := traced(base, reserveTrace).Reserve(context.Background(), token,
		apiclient.ReserveBody(aid, 1, "traced-reservation-1"))
	if err != nil || m.Code != apiclient.CodeOK || order.OrderNo == "" {
		t.Fatalf("reserve answered %+v %s (%v)", order, m.Code, err)
	}
	if _, _, err := traced(base, payTrace).Pay(context.Background(), token, order.OrderNo); err != nil {
		t.Fatal(err)
	}

	// The writer applies both events after the answers: wait for its spans.
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if consumed(exp.GetSpans(), reserveTrace) && consumed(exp.GetSpans(), payTrace) {
			break
		}
	}
	spans := exp.GetSpans()
	for _, tr := range []string{reserveTrace, payTrace} {
		for _, s := range spans {
			if s.SpanContext.TraceID().String() == tr {
				t.Logf("%s %-8s %-34s %9s", tr[:4], s.SpanKind, s.Name, s.EndTime.Sub(s.StartTime).Round(time.Microsecond))
			}
		}
	}

	// Each request's chain, each span the child of the one before, in the caller's trace.
	rpcChain := func(route, method, script string) []step {
		return []step{{oteltrace.SpanKindServer, route}, {oteltrace.SpanKindClient, "inventory.Inventory/" + method},
			{oteltrace.SpanKindServer, "inventory.Inventory/" + method}, {oteltrace.SpanKindInternal, script}}
	}
	for _, c := range []struct {
		traceID string
		chain   []step
	}{
		{reserveTrace, rpcChain("/v1/seckill/orders", "ReserveBatch", "stock.reserve")},
		{payTrace, rpcChain("/v1/seckill/orders/:order_no/pay", "Confirm", "stock.confirm")},
	} {
		server := chain(t, spans, c.traceID, "00f067aa0ba902b7", c.chain)[2]
		consume := chain(t, spans, c.traceID, server, []step{{oteltrace.SpanKindInternal, "relay.ack_wait"},
			{oteltrace.SpanKindProducer, "kafka.produce"}, {oteltrace.SpanKindConsumer, "kafka.consume"}})[2]
		apply := slices.IndexFunc(spans, func(s tracetest.SpanStub) bool {
			return s.Name == "writer.apply" && (s.Parent.SpanID().String() == consume || slices.ContainsFunc(s.Links,
				func(l sdktrace.Link) bool { return l.SpanContext.SpanID().String() == consume }))
		})
		if apply < 0 {
			t.Fatalf("no writer.apply span under or linked to kafka.consume %s of trace %s", consume, c.traceID)
		}
		id := spans[apply].SpanContext.SpanID()
		if !slices.ContainsFunc(spans, func(s tracetest.SpanStub) bool {
			return s.Name == "sql" && s.Parent.SpanID() == id
		}) {
			t.Errorf("writer.apply span %s has no sql span under it", id)
		}
	}
}

// consumed reports whether the writer applied an event of trace traceID and answered it: a
// writer.apply span in that trace or linked to it, and a kafka.consume span (ended after it).
func consumed(spans tracetest.SpanStubs, traceID string) bool {
	in := func(sc oteltrace.SpanContext) bool { return strings.EqualFold(sc.TraceID().String(), traceID) }
	return slices.ContainsFunc(spans, func(s tracetest.SpanStub) bool {
		return s.Name == "kafka.consume" && in(s.SpanContext)
	}) && slices.ContainsFunc(spans, func(s tracetest.SpanStub) bool {
		return s.Name == "writer.apply" && (in(s.SpanContext) ||
			slices.ContainsFunc(s.Links, func(l sdktrace.Link) bool { return in(l.SpanContext) }))
	})
}

// step is a span a chain expects.
type step struct {
	kind oteltrace.SpanKind
	name string
}

// chain finds steps in trace traceID, the first under span parent and each under the one
// before, and returns their span ids.
func chain(t *testing.T, spans tracetest.SpanStubs, traceID, parent string, steps []step) []string {
	t.Helper()
	ids := make([]string, len(steps))
	for i, st := range steps {
		j := slices.IndexFunc(spans, func(s tracetest.SpanStub) bool {
			return s.SpanContext.TraceID().String() == traceID && s.SpanKind == st.kind && s.Name == st.name &&
				s.Parent.SpanID().String() == parent
		})
		if j < 0 {
			t.Fatalf("no %s span %q under span %s in trace %s", st.kind, st.name, parent, traceID)
		}
		parent = spans[j].SpanContext.SpanID().String()
		ids[i] = parent
	}
	return ids
}
