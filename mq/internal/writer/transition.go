package writer

import "github.com/seckill/seckill/internal/event"

// Order states as stored in seckill_order.status; "" is "no row yet".
const (
	stateNone      = ""
	stateReserved  = string(event.Reserved)
	statePaid      = string(event.Paid)
	stateCancelled = string(event.Cancelled)
	stateExpired   = string(event.Expired)
)

// delta is a change of one activity's inventory columns.
type delta struct{ available, locked, sold int64 }

// transition is DESIGN.md's table, the one place it is written down in code. An event
// names the order's target state; the order moves from its current state to the target
// and the inventory changes by that transition's delta only. Anything else (a repeat, a
// terminal order, a reserved event after paid) changes nothing: that is what makes the
// writer idempotent and independent of arrival order.
//
//	from -> to                    available  locked  sold
//	none -> reserved                 -q        +q
//	none -> paid                     -q                +q
//	none -> cancelled/expired
//	reserved -> paid                           -q      +q
//	reserved -> cancelled/expired    +q        -q
//	terminal -> anything           no-op
func transition(from string, to event.Type, q int64) (next string, d delta, changed bool) {
	switch from {
	case stateNone:
		switch to {
		case event.Reserved:
			return stateReserved, delta{available: -q, locked: q}, true
		case event.Paid:
			return statePaid, delta{available: -q, sold: q}, true
		case event.Cancelled, event.Expired:
			return string(to), delta{}, true
		}
	case stateReserved:
		switch to {
		case event.Paid:
			return statePaid, delta{locked: -q, sold: q}, true
		case event.Cancelled, event.Expired:
			return string(to), delta{available: q, locked: -q}, true
		}
	}
	return from, delta{}, false
}
