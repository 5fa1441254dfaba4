package relay

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
)

// sent records what a Sender was given.
type sent struct{ msgs []kafkax.Message }

func (s *sent) Send(_ context.Context, msgs ...kafkax.Message) error {
	s.msgs = append(s.msgs, msgs...)
	return nil
}

// traceMsg is a message of the entry traced as tp, as toItem builds it.
func traceMsg(tp string) (kafkax.Message, oteltrace.SpanContext) {
	return withTraceHeader(kafkax.Message{Key: []byte("k"), Value: []byte("v"),
		Headers: []kafkax.HeaderKV{{Key: "sk-mac", Value: []byte("m")}}}, tp)
}

// The Acker's produce (under the request's span): kafka.produce is a producer span with the
// messaging attributes, and each message of the request's trace carries it as its
// traceparent, so that the writer's consume span is its child; the caller's messages are
// unchanged. A message of another trace keeps its own (the produce links to it).
func TestProduceInjectsItsSpan(t *testing.T) {
	exp := testenv.RecordSpans(t)
	ctx, req := otel.Tracer("test").Start(context.Background(), "request")
	defer req.End()
	own, ownSC := traceMsg(event.TraceParent(ctx))
	otherTP := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	other, otherSC := traceMsg(otherTP)
	var s sent
	msgs := []kafkax.Message{own, other}
	if err := sendTraced(ctx, &s, "events", msgs, []oteltrace.SpanContext{ownSC, otherSC}); err != nil {
		t.Fatal(err)
	}
	produce := only(t, exp.GetSpans(), "kafka.produce")
	if produce.SpanKind != oteltrace.SpanKindProducer || produce.Parent.SpanID() != req.SpanContext().SpanID() {
		t.Fatalf("kafka.produce: kind %v, parent %v; want producer under the request's span", produce.SpanKind,
			produce.Parent.SpanID())
	}
	for _, kv := range []attribute.KeyValue{semconv.MessagingSystemKafka,
		semconv.MessagingDestinationName("events"), semconv.MessagingOperationTypeSend,
		semconv.MessagingBatchMessageCount(2)} {
		if !hasAttr(produce.Attributes, kv) {
			t.Errorf("kafka.produce lacks %s=%s: %v", kv.Key, kv.Value.Emit(), produce.Attributes)
		}
	}
	if len(produce.Links) != 2 {
		t.Errorf("kafka.produce has %d links, want 2", len(produce.Links))
	}
	got := event.SpanContextOf(header(s.msgs[0], event.HeaderTraceParent))
	if got.TraceID() != req.SpanContext().TraceID() || got.SpanID() != produce.SpanContext.SpanID() {
		t.Errorf("the request's message carries %v, want the produce span %v", got, produce.SpanContext)
	}
	if header(s.msgs[0], "sk-mac") != "m" || len(s.msgs[0].Headers) != 2 {
		t.Errorf("the other headers are lost: %+v", s.msgs[0].Headers)
	}
	if header(s.msgs[1], event.HeaderTraceParent) != otherTP {
		t.Errorf("another trace's message carries %q, want its own %q", header(s.msgs[1], event.HeaderTraceParent),
			otherTP)
	}
	if header(msgs[0], event.HeaderTraceParent) != header(own, event.HeaderTraceParent) {
		t.Error("the caller's message was changed")
	}
}

// The relay's produce (no request): a root span linked to the messages' traces, each message
// keeping its request's traceparent. Not sampled: no span and the messages as they are.
func TestRelayProduceKeepsTheRequestsTrace(t *testing.T) {
	exp := testenv.RecordSpans(t)
	tp := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	m, sc := traceMsg(tp)
	var s sent
	// The relay's context is untraced (its Redis calls start no trace): the produce is a root still.
	if err := sendTraced(event.Untraced(context.Background()), &s, "events", []kafkax.Message{m},
		[]oteltrace.SpanContext{sc}); err != nil {
		t.Fatal(err)
	}
	produce := only(t, exp.GetSpans(), "kafka.produce")
	if produce.Parent.IsValid() || len(produce.Links) != 1 || produce.Links[0].SpanContext.TraceID() != sc.TraceID() {
		t.Errorf("the relay's kafka.produce: parent %v, links %v; want a root linked to %v", produce.Parent,
			produce.Links, sc.TraceID())
	}
	if header(s.msgs[0], event.HeaderTraceParent) != tp {
		t.Errorf("the message carries %q, want %q", header(s.msgs[0], event.HeaderTraceParent), tp)
	}

	exp.Reset()
	unsampled := oteltrace.ContextWithSpanContext(context.Background(), sc.WithTraceFlags(0))
	m, _ = traceMsg(event.TraceParent(unsampled))
	if err := sendTraced(unsampled, &s, "events", []kafkax.Message{m}, []oteltrace.SpanContext{{}}); err != nil {
		t.Fatal(err)
	}
	if n := len(exp.GetSpans()); n != 0 || header(m, event.HeaderTraceParent) != "" {
		t.Errorf("not sampled: %d spans, traceparent %q", n, header(m, event.HeaderTraceParent))
	}
}

// only is the one span named name.
func only(t *testing.T, spans tracetest.SpanStubs, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans %q, want 1 (of %d)", len(found), name, len(spans))
	}
	return found[0]
}

func hasAttr(attrs []attribute.KeyValue, kv attribute.KeyValue) bool {
	for _, a := range attrs {
		if a == kv {
			return true
		}
	}
	return false
}
