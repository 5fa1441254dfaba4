package event_test

import (
	"testing"

	"github.com/seckill/seckill/internal/domain"
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
		{domain.StateNone, event.Reserved, domain.StateReserved, event.Delta{-q, q, 0}, true},
		{domain.StateNone, event.Paid, domain.StatePaid, event.Delta{-q, 0, q}, true},
		{domain.StateNone, event.Cancelled, domain.StateCancelled, event.Delta{}, true},
		{domain.StateNone, event.Expired, domain.StateExpired, event.Delta{}, true},
		{domain.StateReserved, event.Paid, domain.StatePaid, event.Delta{0, -q, q}, true},
		{domain.StateReserved, event.Cancelled, domain.StateCancelled, event.Delta{q, -q, 0}, true},
		{domain.StateReserved, event.Expired, domain.StateExpired, event.Delta{q, -q, 0}, true},
		{domain.StateReserved, event.Reserved, domain.StateReserved, event.Delta{}, false},
		{domain.StatePaid, event.Reserved, domain.StatePaid, event.Delta{}, false},
		{domain.StatePaid, event.Cancelled, domain.StatePaid, event.Delta{}, false},
		{domain.StateCancelled, event.Paid, domain.StateCancelled, event.Delta{}, false},
		{domain.StateExpired, event.Reserved, domain.StateExpired, event.Delta{}, false},
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
		domain.StateReserved:  {Available: -2, Locked: 2},
		domain.StatePaid:      {Available: -2, Sold: 2},
		domain.StateCancelled: {},
		domain.StateExpired:   {},
	} {
		if got := event.Holding(state, 2); got != want {
			t.Errorf("%s: %+v, want %+v", state, got, want)
		}
	}
}
