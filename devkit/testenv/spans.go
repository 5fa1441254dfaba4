package testenv

import (
	"testing"

	"github.com/zeromicro/go-zero/core/trace"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// RecordSpans adds an in-memory exporter to go-zero's tracer provider (one per process,
// started here, every span sampled, when no service started it) for the rest of the test.
func RecordSpans(t testing.TB) *tracetest.InMemoryExporter {
	t.Helper()
	trace.StartAgent(trace.Config{Name: "seckill-test", Sampler: 1, Batcher: "otlpgrpc"}) // no-op once started
	tp, ok := otel.GetTracerProvider().(*sdktrace.TracerProvider)
	if !ok {
		t.Fatalf("go-zero's tracer provider is a %T, not the OpenTelemetry SDK's", otel.GetTracerProvider())
	}
	exp := tracetest.NewInMemoryExporter()
	sp := sdktrace.NewSimpleSpanProcessor(exp)
	tp.RegisterSpanProcessor(sp)
	t.Cleanup(func() { tp.UnregisterSpanProcessor(sp) })
	return exp
}
