package testenv

import (
	"os"
	"testing"

	"github.com/zeromicro/go-zero/core/trace"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// RecordSpans adds an in-memory exporter to go-zero's tracer provider (one per process,
// started here, every span sampled, when no service started it) for the rest of the test.
// Only a service whose Telemetry exports (Telemetry below) makes the spans of go-zero's
// trace middleware and interceptors.
func RecordSpans(t testing.TB) *tracetest.InMemoryExporter {
	t.Helper()
	startAgent()
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

// Telemetry is a service's Telemetry for a test that records spans: on, every span sampled,
// with an exporter (so that the service installs go-zero's trace middleware and
// interceptors, internal/telemetry). go-zero's agent, one per process, is started here
// first, without an exporter, so the file named is never opened: RecordSpans adds the
// test's own.
func Telemetry() trace.Config {
	startAgent()
	return trace.Config{Name: "seckill-test", Sampler: 1, Batcher: "file", Endpoint: os.DevNull}
}

// startAgent starts go-zero's trace agent, every span sampled, with no exporter (a no-op
// once started).
func startAgent() {
	trace.StartAgent(trace.Config{Name: "seckill-test", Sampler: 1, Batcher: "otlpgrpc"})
}
