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
// and passes the row only for a trace that crosses api -> rpc and goes on through an rpc
// producer span to an mq consumer span under it: a writer span in another trace, or a
// consumer span that is a root, does not count.
func TestTraceReceiver(t *testing.T) {
	r, err := startTraceReceiver("")
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	names := map[string]string{"api": "seckill-api", "rpc": "inventory.rpc", "mq": "seckill.mq"}
	api, rpc, mq := provider(t, r.addr, names["api"]), provider(t, r.addr, names["rpc"]), provider(t, r.addr, names["mq"])
	ctx := context.Background()
	start := func(p *sdktrace.TracerProvider, ctx context.Context, name string, kind trace.SpanKind) (
		context.Context, trace.Span) {
		return p.Tracer("t").Start(ctx, name, trace.WithSpanKind(kind))
	}
	flush := func() {
		for _, p := range []*sdktrace.TracerProvider{api, rpc, mq} {
			if err := p.ForceFlush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}

	// api -> rpc -> producer in one trace; the writer's consumer span a root of its own (the
	// traceparent not carried across Kafka): every service exports, the crossing is there,
	// the 4 hops are not.
	actx, a := start(api, ctx, "/v1/seckill/orders", trace.SpanKindServer)
	sctx, s := start(rpc, actx, "inventory.Inventory/ReserveBatch", trace.SpanKindServer)
	_, p := start(rpc, sctx, "kafka.produce", trace.SpanKindProducer)
	_, m := start(mq, ctx, "kafka.consume", trace.SpanKindConsumer)
	for _, sp := range []trace.Span{m, p, s, a} {
		sp.End()
	}
	flush()
	c := r.traceCheck(ctx, names, "1", 2*time.Second)
	rep := r.report(names)
	if c.Status != Fail || rep.crossing != 1 || rep.hops != 0 {
		t.Fatalf("the writer's span in a trace of its own, yet: %+v %+v", c, rep)
	}
	t.Log(c.Detail)

	// The same with the consumer span under the producer span: 4 hops in one trace.
	actx, a = start(api, ctx, "/v1/seckill/orders", trace.SpanKindServer)
	sctx, s = start(rpc, actx, "inventory.Inventory/ReserveBatch", trace.SpanKindServer)
	pctx, p := start(rpc, sctx, "kafka.produce", trace.SpanKindProducer)
	_, m = start(mq, pctx, "kafka.consume", trace.SpanKindConsumer)
	for _, sp := range []trace.Span{m, p, s, a} {
		sp.End()
	}
	for _, p := range []*sdktrace.TracerProvider{api, rpc, mq} {
		if err := p.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	c = r.traceCheck(ctx, names, "1", 5*time.Second)
	rep = r.report(names)
	if c.Status != Pass || rep.crossing != 2 || rep.hops != 1 || rep.hopsName != a.SpanContext().TraceID().String() {
		t.Fatalf("want one trace of 4 hops, %s: %+v %+v", a.SpanContext().TraceID(), c, rep)
	}
	if rep.perName["seckill-api"] != 2 || rep.perName["inventory.rpc"] != 4 || rep.perName["seckill.mq"] != 2 {
		t.Errorf("spans by service.name: %v", rep.perName)
	}
	t.Log(c.Detail)
}
