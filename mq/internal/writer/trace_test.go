package writer

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/event"
)

// A batch's writer.apply is the child of its first sampled event's span (the consumer's
// kafka.consume) and links to the other sampled events' spans; a batch with none sampled
// starts no span.
func TestApplyContinuesTheFirstSampledEvent(t *testing.T) {
	exp := testenv.RecordSpans(t)
	sc := func(b byte, flags trace.TraceFlags) trace.SpanContext {
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{b}, SpanID: trace.SpanID{b},
			TraceFlags: flags})
	}
	unsampled, first, second := sc(1, 0), sc(2, trace.FlagsSampled), sc(3, trace.FlagsSampled)
	batch := []*request{{trace: unsampled}, {}, {trace: first}, {trace: second}}
	_, span := startApply(context.Background(), batch)
	event.EndSpan(span, nil)
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	if s.Name != "writer.apply" || s.Parent.SpanID() != first.SpanID() || s.SpanContext.TraceID() != first.TraceID() {
		t.Errorf("%s under %v in trace %v; want writer.apply under %v", s.Name, s.Parent.SpanID(),
			s.SpanContext.TraceID(), first.SpanID())
	}
	if len(s.Links) != 1 || s.Links[0].SpanContext.SpanID() != second.SpanID() {
		t.Errorf("links %v, want the second sampled event's span only", s.Links)
	}

	exp.Reset()
	if _, span := startApply(context.Background(), []*request{{trace: unsampled}, {}}); span != nil ||
		len(exp.GetSpans()) != 0 {
		t.Error("a batch with no sampled event started a span")
	}
}
