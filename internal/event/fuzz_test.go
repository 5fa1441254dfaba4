package event_test

import (
	stdjson "encoding/json"
	"testing"

	"github.com/seckill/seckill/internal/event"
)

// FuzzUnmarshal: a Kafka message value either is refused or decodes to a valid event
// that survives a round trip unchanged (the writer's input is exactly what was sent).
func FuzzUnmarshal(f *testing.F) {
	f.Add([]byte(`{"event_id":"1-0","type":"reserved","activity_id":1,"sku_id":2,"order_no":"1-deadbeef",` +
		`"uid":3,"quantity":1,"at_ms":1}`))
	f.Add([]byte(`{"event_id":"1-1","type":"adjusted","activity_id":1,"delta":-5,"at_ms":1}`))
	f.Add([]byte(`{"event_id":"1-2","type":"paid","activity_id":1,"uid":0,"quantity":1}`))
	f.Add([]byte(`{"type":"bogus"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := event.Unmarshal(b)
		// The codec (segmentio/encoding/json) decides as encoding/json would.
		var std event.Event
		stdErr := stdjson.Unmarshal(b, &std)
		if stdErr == nil {
			stdErr = std.Validate()
		}
		if (err == nil) != (stdErr == nil) || err == nil && e != std {
			t.Fatalf("%q: Unmarshal %+v, %v; encoding/json %+v, %v", b, e, err, std, stdErr)
		}
		if err != nil {
			return
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("Unmarshal accepted an invalid event %+v: %v", e, err)
		}
		raw, err := e.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := stdjson.Marshal(e); string(raw) != string(want) {
			t.Fatalf("Marshal %s, encoding/json %s", raw, want)
		}
		again, err := event.Unmarshal(raw)
		if err != nil || again != e {
			t.Fatalf("round trip: %+v -> %s -> %+v %v", e, raw, again, err)
		}
	})
}

// FuzzFromStream: an outbox entry either is refused or becomes a valid event whose fields
// are the entry's.
func FuzzFromStream(f *testing.F) {
	f.Add("1700000000000-0", "reserved", "1", "2", "1-deadbeef", "3", "1", "", "1700000000000", "req-00000001")
	f.Add("1700000000000-1", "adjusted", "1", "2", "", "", "", "-5", "1700000000000", "")
	f.Add("1-0", "expired", "0", "x", "1-x", "-1", "9223372036854775808", "0", "", "")
	f.Fuzz(func(t *testing.T, id, typ, aid, sku, ono, uid, qty, delta, at, rid string) {
		values := map[string]any{}
		for k, v := range map[string]string{event.FieldType: typ, event.FieldActivity: aid, event.FieldSku: sku,
			event.FieldOrderNo: ono, event.FieldUID: uid, event.FieldQuantity: qty, event.FieldDelta: delta,
			event.FieldAt: at, event.FieldRequestID: rid} {
			if v != "" {
				values[k] = v
			}
		}
		e, err := event.FromStream(id, values)
		if err != nil {
			return
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("FromStream accepted an invalid event %+v: %v", e, err)
		}
		if e.EventID != id || string(e.Type) != typ || e.OrderNo != ono || e.RequestID != rid {
			t.Fatalf("fields changed: %+v from %v", e, values)
		}
		raw, err := e.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if again, err := event.Unmarshal(raw); err != nil || again != e {
			t.Fatalf("a stream event does not survive Kafka: %+v -> %+v %v", e, again, err)
		}
	})
}
