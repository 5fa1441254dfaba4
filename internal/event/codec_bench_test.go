package event_test

import (
	stdjson "encoding/json"
	"testing"

	"github.com/seckill/seckill/internal/event"
)

// benchEvent is a reserved event as the Acker produces it.
var benchEvent = event.Event{EventID: "1700000000123-5", Type: event.Reserved, ActivityID: 12, SkuID: 7,
	OrderNo: "12-17000000001238c0ffee0123456789abcdef", UID: 3, Quantity: 1, AtMs: 1700000000123,
	RequestID: "req-00000001", CreatedMs: 1700000000123, ExpireMs: 1700000900123, Epoch: 2}

// The writer's decode of every event, beside encoding/json's (go test -bench Codec ./internal/event).
func BenchmarkCodecUnmarshal(b *testing.B) {
	raw, _ := benchEvent.Marshal()
	for b.Loop() {
		if _, err := event.Unmarshal(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCodecUnmarshalStdlib(b *testing.B) {
	raw, _ := benchEvent.Marshal()
	for b.Loop() {
		var e event.Event
		if err := stdjson.Unmarshal(raw, &e); err != nil {
			b.Fatal(err)
		}
		if err := e.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

// The relay's and the Acker's encode of every event, beside encoding/json's.
func BenchmarkCodecMarshal(b *testing.B) {
	for b.Loop() {
		if _, err := benchEvent.Marshal(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCodecMarshalStdlib(b *testing.B) {
	for b.Loop() {
		if _, err := stdjson.Marshal(benchEvent); err != nil {
			b.Fatal(err)
		}
	}
}
