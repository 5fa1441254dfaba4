package consumer

import (
	"errors"
	"slices"
	"testing"

	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/event"
)

// A message's traceparent header becomes the remote parent in the handler's context,
// wherever it sits among the headers; none, or garbage, gives an untraced context.
func TestTraceContextFromHeaders(t *testing.T) {
	tp := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	other := kafka.Header{Key: "sk-mac", Value: []byte("abc")}
	for _, c := range []struct {
		name    string
		headers []kafka.Header
		traced  bool
	}{
		{"second header", []kafka.Header{other, {Key: event.HeaderTraceParent, Value: []byte(tp)}}, true},
		{"none", []kafka.Header{other}, false},
		{"garbage", []kafka.Header{{Key: event.HeaderTraceParent, Value: []byte("00-zz")}}, false},
	} {
		sc := trace.SpanContextFromContext(traceContext(kafka.Message{Headers: c.headers}))
		if sc.IsValid() != c.traced || c.traced && (sc.TraceID().String() != tp[3:35] || !sc.IsRemote()) {
			t.Errorf("%s: span context %v", c.name, sc)
		}
	}
}

// A message whose traceparent is sampled is handed over under the span kafka.consume, a
// consumer span that is the child of the header's span in its trace, with the messaging
// attributes, ended by done (an error recorded). Not sampled, or no header: no span, done
// as it was.
func TestConsumeSpanContinuesTheTrace(t *testing.T) {
	exp := testenv.RecordSpans(t)
	m := &member{group: "seckill-writer"}
	tp := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	msg := kafka.Message{Topic: "events", Partition: 3, Offset: 42,
		Headers: []kafka.Header{{Key: "sk-mac", Value: []byte("m")}, {Key: event.HeaderTraceParent, Value: []byte(tp)}}}
	doneErr := errors.New("not durable")
	var got error
	ctx, done := m.consume(msg, func(err error) { got = err })
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() || span.SpanContext().TraceID().String() != tp[3:35] {
		t.Fatalf("the handler's context holds %v, want a recording span in trace %s", span.SpanContext(), tp[3:35])
	}
	if len(exp.GetSpans()) != 0 {
		t.Fatal("the span ended before done")
	}
	done(doneErr)
	if got != doneErr {
		t.Fatalf("done passed %v", got)
	}
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	if s.Name != "kafka.consume" || s.SpanKind != trace.SpanKindConsumer || s.Parent.SpanID().String() != tp[36:52] ||
		!s.Parent.IsRemote() || s.Status.Code != codes.Error {
		t.Errorf("span %q kind %v parent %v status %v; want kafka.consume, consumer, under %s, error", s.Name,
			s.SpanKind, s.Parent, s.Status, tp[36:52])
	}
	for _, kv := range []attribute.KeyValue{semconv.MessagingSystemKafka,
		semconv.MessagingDestinationName("events"), semconv.MessagingConsumerGroupName("seckill-writer"),
		semconv.MessagingDestinationPartitionID("3"), semconv.MessagingKafkaOffset(42),
		semconv.MessagingOperationTypeProcess} {
		if !slices.Contains(s.Attributes, kv) {
			t.Errorf("kafka.consume lacks %s=%s: %v", kv.Key, kv.Value.Emit(), s.Attributes)
		}
	}

	exp.Reset()
	for _, h := range [][]kafka.Header{nil, {{Key: event.HeaderTraceParent, Value: []byte(tp[:len(tp)-2] + "00")}}} {
		ctx, done := m.consume(kafka.Message{Headers: h}, func(error) {})
		done(nil)
		if trace.SpanFromContext(ctx).IsRecording() || len(exp.GetSpans()) != 0 {
			t.Errorf("headers %v: a span (%d recorded)", h, len(exp.GetSpans()))
		}
	}
}
