package consumer

import (
	"testing"

	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/trace"

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
