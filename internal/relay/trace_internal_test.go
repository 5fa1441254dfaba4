package relay

import (
	"testing"

	red "github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
)

// An entry's traceparent becomes its message's header, once, beside the headers already
// there (a dead letter's reason stays readable by key); an entry without a valid one gets none.
func TestItemCarriesTheEntrysTrace(t *testing.T) {
	tp := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	valid := map[string]any{event.FieldType: "adjusted", event.FieldActivity: "1", event.FieldDelta: "5",
		event.FieldAt: "1700000000000"}
	with := func(v map[string]any, tp string) map[string]any {
		out := map[string]any{event.FieldTraceParent: tp}
		for k, x := range v {
			out[k] = x
		}
		return out
	}
	for _, c := range []struct {
		name   string
		values map[string]any
		dead   bool
		header string
	}{
		{"event", with(valid, tp), false, tp},
		{"dead letter", with(map[string]any{event.FieldType: "exploded"}, tp), true, tp},
		{"untraced", valid, false, ""},
		{"garbage", with(valid, "00-zz"), false, ""},
	} {
		it := toItem("stream", red.XMessage{ID: "1-0", Values: c.values})
		if len(it.msgs) != 1 || len(it.traces) != 1 {
			t.Fatalf("%s: %d messages, %d traces; want 1", c.name, len(it.msgs), len(it.traces))
		}
		msg, trace := it.msgs[0], it.traces[0]
		n := 0
		for _, h := range msg.Headers {
			if h.Key == event.HeaderTraceParent {
				n++
			}
		}
		if it.dead != c.dead || header(msg, event.HeaderTraceParent) != c.header || n > 1 ||
			trace.IsValid() != (c.header != "") {
			t.Errorf("%s: dead %v, header %q (%d), trace %v", c.name, it.dead,
				header(msg, event.HeaderTraceParent), n, trace)
		}
		if c.dead && header(msg, kafkax.HeaderReason) == "" {
			t.Errorf("%s: no reason header: %+v", c.name, msg.Headers)
		}
	}
	old := []kafkax.HeaderKV{{Key: event.HeaderTraceParent, Value: []byte("x")}}
	m, _ := withTraceHeader(kafkax.Message{Headers: old}, tp)
	if len(m.Headers) != 1 || header(m, event.HeaderTraceParent) != tp {
		t.Errorf("an old traceparent header is not replaced: %+v", m.Headers)
	}
}
