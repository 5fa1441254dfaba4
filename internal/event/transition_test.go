package event_test

import (
	"testing"

	"github.com/seckill/seckill/internal/event"
)

func TestTransitionTable(t *testing.T) {
	const q = 3
	for _, tc := range []struct {
		from    string
		to      event.Type
		next    string
		d       event.Delta
		changed bool
	}{
		{event.StateNone, event.Reserved, event.StateReserved, event.Delta{-q, q, 0}, true},
		{event.StateNone, event.Paid, event.StatePaid, event.Delta{-q, 0, q}, true},
		{event.StateNone, event.Cancelled, event.StateCancelled, event.Delta{}, true},
		{event.StateNone, event.Expired, event.StateExpired, event.Delta{}, true},
		{event.StateReserved, event.Paid, event.StatePaid, event.Delta{0, -q, q}, true},
		{event.StateReserved, event.Cancelled, event.StateCancelled, event.Delta{q, -q, 0}, true},
		{event.StateReserved, event.Expired, event.StateExpired, event.Delta{q, -q, 0}, true},
		{event.StateReserved, event.Reserved, event.StateReserved, event.Delta{}, false},
		{event.StatePaid, event.Reserved, event.StatePaid, event.Delta{}, false},
		{event.StatePaid, event.Cancelled, event.StatePaid, event.Delta{}, false},
		{event.StateCancelled, event.Paid, event.StateCancelled, event.Delta{}, false},
		{event.StateExpired, event.Reserved, event.StateExpired, event.Delta{}, false},
	} {
		t.Run(tc.from+"->"+string(tc.to), func(t *testing.T) {
			next, d, changed := event.Transition(tc.from, tc.to, q)
			if next != tc.next || d != tc.d || changed != tc.changed {
				t.Fatalf("got %q %+v %v, want %q %+v %v", next, d, changed, tc.next, tc.d, tc.changed)
			}
		})
	}
}

func TestHoldingIsWhatAnOrderAddsFromNone(t *testing.T) {
	for state, want := range map[string]event.Delta{
		event.StateReserved:  {Available: -2, Locked: 2},
		event.StatePaid:      {Available: -2, Sold: 2},
		event.StateCancelled: {},
		event.StateExpired:   {},
	} {
		if got := event.Holding(state, 2); got != want {
			t.Errorf("%s: %+v, want %+v", state, got, want)
		}
	}
}
