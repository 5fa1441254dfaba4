package faults

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.4.0"
	"go.opentelemetry.io/otel/trace"
)

// provider is a service's tracer provider exporting as go-zero's Batcher otlpgrpc does
// (core/trace/agent.go: otlptracegrpc, insecure, the endpoint's address) to addr.
func provider(t *testing.T, addr, name string) *sdktrace.TracerProvider {
	t.Helper()
	exp, err := otlptracegrpc.New(context.Background(), otlptracegrpc.WithInsecure(), otlptracegrpc.WithEndpoint(addr))
	if err != nil {
		t.Fatal(err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceNameKey.String(name))))
}

// The receiver speaks OTLP/gRPC to the exporter go-zero uses, keeps spans by service.name,
// and finds a trace crossing api -> rpc only when an rpc span's parent is an api span.
func TestTraceReceiver(t *testing.T) {
	r, err := startTraceReceiver()
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	names := map[string]string{"api": "seckill-api", "rpc": "inventory.rpc", "mq": "seckill.mq"}
	api, rpc, mq := provider(t, r.addr, names["api"]), provider(t, r.addr, names["rpc"]), provider(t, r.addr, names["mq"])
	ctx := context.Background()

	// rpc alone (no api parent) and api alone: spans of every kind, no crossing.
	_, s := rpc.Tracer("t").Start(ctx, "rpc root", trace.WithSpanKind(trace.SpanKindServer))
	s.End()
	actx, a := api.Tracer("t").Start(ctx, "api alone", trace.WithSpanKind(trace.SpanKindServer))
	a.End()
	_, m := mq.Tracer("t").Start(actx, "writer.apply") // mq's span under api's: not api -> rpc
	m.End()
	for _, p := range []*sdktrace.TracerProvider{api, rpc, mq} {
		if err := p.ForceFlush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	c := r.traceCheck(ctx, names, "1", 2*time.Second)
	if c.Status != Fail || r.report(names["api"], names["rpc"]).crossing != 0 {
		t.Fatalf("no rpc span under an api span, yet: %+v", c)
	}
	t.Log(c.Detail)

	// The gateway's span, the inventory service's span its child (the context propagated).
	actx, a = api.Tracer("t").Start(ctx, "POST /v1/reservations", trace.WithSpanKind(trace.SpanKindServer))
	_, s = rpc.Tracer("t").Start(actx, "inventory.Inventory/Reserve", trace.WithSpanKind(trace.SpanKindServer))
	s.End()
	a.End()
	for _, p := range []*sdktrace.TracerProvider{api, rpc, mq} {
		if err := p.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	c = r.traceCheck(ctx, names, "1", 5*time.Second)
	rep := r.report(names["api"], names["rpc"])
	if c.Status != Pass || rep.crossing != 1 || rep.crossName != a.SpanContext().TraceID().String() {
		t.Fatalf("want one crossing trace %s: %+v %+v", a.SpanContext().TraceID(), c, rep)
	}
	if rep.perName["seckill-api"] != 2 || rep.perName["inventory.rpc"] != 2 || rep.perName["seckill.mq"] != 1 {
		t.Errorf("spans by service.name: %v", rep.perName)
	}
	t.Log(c.Detail)
}
