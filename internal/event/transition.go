package event

import "github.com/seckill/seckill/internal/domain"

// Delta is a change of one activity's inventory columns.
type Delta struct{ Available, Locked, Sold int64 }

// Transition moves an order from state from to the event's target state to, with the inventory
// delta of that transition; anything else changes nothing (docs/DESIGN.md, "Events"):
//
//	from -> to                    available  locked  sold
//	none -> reserved                 -q        +q
//	none -> paid                     -q                +q
//	none -> cancelled/expired
//	reserved -> paid                           -q      +q
//	reserved -> cancelled/expired    +q        -q
//	terminal -> anything           no-op
func Transition(from string, to Type, q int64) (next string, d Delta, changed bool) {
	switch from {
	case domain.StateNone:
		switch to {
		case Reserved:
			return domain.StateReserved, Delta{Available: -q, Locked: q}, true
		case Paid:
			return domain.StatePaid, Delta{Available: -q, Sold: q}, true
		case Cancelled, Expired:
			return string(to), Delta{}, true
		}
	case domain.StateReserved:
		switch to {
		case Paid:
			return domain.StatePaid, Delta{Locked: -q, Sold: q}, true
		case Cancelled, Expired:
			return string(to), Delta{Available: q, Locked: -q}, true
		}
	}
	return from, Delta{}, false
}

// Holding is what an order in state contributes to its activity's inventory, counted from
// none: a reserved order holds q locked, a paid one q sold, a released one nothing.
func Holding(state string, q int64) Delta {
	_, d, _ := Transition(domain.StateNone, Type(state), q)
	return d
}
