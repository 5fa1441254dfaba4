package event_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/event"
)

// A traced context's traceparent names its span; an untraced one has none, and neither
// has garbage: no span, no header, no link.
func TestTraceParentRoundTrip(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3},
		SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled})
	tp := event.TraceParent(trace.ContextWithSpanContext(context.Background(), sc))
	if want := "00-01020300000000000000000000000000-0405060000000000-01"; tp != want {
		t.Fatalf("traceparent %q, want %q", tp, want)
	}
	if got := event.SpanContextOf(tp); !got.Equal(sc.WithRemote(true)) {
		t.Fatalf("span context of %q: %v, want %v", tp, got, sc)
	}
	if tp := event.TraceParent(context.Background()); tp != "" {
		t.Fatalf("untraced context: traceparent %q", tp)
	}
	for _, bad := range []string{"", "00-zz", "00-00000000000000000000000000000000-0405060000000000-01"} {
		if event.SpanContextOf(bad).IsValid() {
			t.Errorf("%q names a span", bad)
		}
	}
	if _, span := event.StartSpan(context.Background(), "x", trace.SpanKindInternal, nil); span != nil {
		t.Fatal("a span started without a parent or a link")
	}
}
