package event_test

import (
	"testing"

	"github.com/seckill/seckill/internal/event"
)

// reserve.lua writes no 'cms': a reserved entry's created_ms is its 'at'; an entry that
// carries 'cms' (every other order event, and reserved entries written before) keeps it.
func TestFromStreamReservedCreatedIsAt(t *testing.T) {
	base := func(typ string) map[string]any {
		return map[string]any{event.FieldType: typ, event.FieldActivity: "1", event.FieldSku: "2",
			event.FieldOrderNo: "1-deadbeef", event.FieldUID: "3", event.FieldQuantity: "1",
			event.FieldAt: "1700000000123", event.FieldRequestID: "req-00000001"}
	}
	e, err := event.FromStream("1-0", base("reserved"))
	if err != nil || e.CreatedMs != 1700000000123 {
		t.Fatalf("reserved without cms: %+v, %v; want created_ms = at", e, err)
	}
	v := base("reserved")
	v[event.FieldCreated] = "1700000000000"
	if e, err := event.FromStream("1-0", v); err != nil || e.CreatedMs != 1700000000000 {
		t.Fatalf("reserved with cms: %+v, %v", e, err)
	}
	if e, err := event.FromStream("1-0", base("paid")); err != nil || e.CreatedMs != 0 {
		t.Fatalf("paid without cms: %+v, %v; want created_ms left 0", e, err)
	}
}
