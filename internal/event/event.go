// Package event is the one schema of stock-change events, shared by the Lua scripts
// (which XADD them to an activity's outbox stream), the relay (stream -> Kafka) and the
// writer (Kafka -> MySQL).
package event

import (
	// segmentio/encoding/json is encoding/json's API and behaviour at a fraction of the cost
	"fmt"
	// (kafka-go's authors; FuzzUnmarshal checks it against encoding/json): every event is
	"strconv"
	"unicode/utf8"

	"github.com/segmentio/encoding/json"
	// marshalled once by the Acker or the relay and unmarshalled once by the writer.

	"github.com/seckill/seckill/internal/domain"
)

// Topic is the Kafka topic every change is published to, keyed by order_no.
const Topic = "seckill-order-events"

// DeadLetterTopic receives events the writer cannot apply, with the reason.
const DeadLetterTopic = "seckill-order-events-dlq"

// Type is the kind of change; for order events it is the order's target state.
type Type string

const (
	Reserved  Type = "reserved"
	Paid      Type = "paid"
	Cancelled Type = "cancelled"
	Expired   Type = "expired"
	Adjusted  Type = "adjusted"
	// Entered is a buyer's entry in an activity's opening draw (no order, no stock moved).
	Entered Type = "entered"
)

// Valid reports whether t is a known type.
func (t Type) Valid() bool {
	switch t {
	case Reserved, Paid, Cancelled, Expired, Adjusted, Entered:
		return true
	}
	return false
}

// Event is the Kafka message body (JSON). EventID is the outbox stream entry id.
// RequestID, CreatedMs and ExpireMs are additions to DESIGN.md's list: they let the writer
// create a complete order row from whichever event of an order arrives first.
type Event struct {
	EventID    string `json:"event_id"`
	Type       Type   `json:"type"`
	ActivityID int64  `json:"activity_id"`
	SkuID      int64  `json:"sku_id"`
	OrderNo    string `json:"order_no,omitempty"`
	UID        int64  `json:"uid,omitempty"`
	Quantity   int64  `json:"quantity,omitempty"`
	Delta      int64  `json:"delta,omitempty"`
	AtMs       int64  `json:"at_ms"`
	RequestID  string `json:"request_id,omitempty"`
	CreatedMs  int64  `json:"created_ms,omitempty"`
	ExpireMs   int64  `json:"expire_ms,omitempty"`
	// Epoch is the activity's epoch in Redis when the change was made (inventory.epoch
	// of the warm-up or rebuild that wrote the stock hash; 0: unknown, never stale). The
	// writer drops a change of an epoch older than MySQL's: it was made by a Redis book
	// that a rebuild has since replaced without it (DESIGN.md, "Acknowledged only once in
	// Kafka").
	Epoch int64 `json:"epoch,omitempty"`
	// TradeNo is the payment provider's payment id of a paid event paid through its
	// notification ("" for the buyer's own pay): the writer keeps it with the order.
	TradeNo string `json:"trade_no,omitempty"`
}

// The outbox entry's attribute keys (FieldEntry), as the Lua scripts write them, and the
// field names of an entry written before entries were packed (XADD key * t .. aid .. ...).
const (
	FieldType      = "t"
	FieldActivity  = "aid"
	FieldSku       = "sku"
	FieldOrderNo   = "ono"
	FieldUID       = "uid"
	FieldQuantity  = "qty"
	FieldDelta     = "d"
	FieldAt        = "at"
	FieldRequestID = "rid"
	FieldCreated   = "cms"
	FieldExpire    = "ems"
	FieldEpoch     = "ep"
	// FieldSeq is the stock hash's change count ('seq') that an order change made; the
	// writer does not read it (the inventory service's Acker does, on the entry).
	FieldSeq = "sq"
	// FieldTradeNo is a provider's payment id (confirm.lua, a paid entry only).
	FieldTradeNo = "tn"
)

// FromStream builds an event from an outbox stream entry (Attributes, then FromAttributes).
func FromStream(id string, values map[string]any) (Event, error) {
	a, err := Attributes(values)
	if err != nil {
		return Event{}, fmt.Errorf("outbox entry %s: %w", id, err)
	}
	return FromAttributes(id, a)
}

// FromAttributes builds the event of outbox entry id from its attributes (Attributes).
func FromAttributes(id string, a map[string]string) (Event, error) {
	num := func(k string) (int64, error) {
		s := a[k]
		if s == "" {
			return 0, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("outbox entry %s: field %s=%q: %w", id, k, s, err)
		}
		return n, nil
	}
	e := Event{EventID: id, Type: Type(a[FieldType]), OrderNo: a[FieldOrderNo], RequestID: a[FieldRequestID],
		TradeNo: a[FieldTradeNo]}
	var err error
	for _, f := range []struct {
		k string
		p *int64
	}{
		{FieldActivity, &e.ActivityID}, {FieldSku, &e.SkuID}, {FieldUID, &e.UID},
		{FieldQuantity, &e.Quantity}, {FieldDelta, &e.Delta}, {FieldAt, &e.AtMs},
		{FieldCreated, &e.CreatedMs}, {FieldExpire, &e.ExpireMs}, {FieldEpoch, &e.Epoch},
	} {
		if *f.p, err = num(f.k); err != nil {
			return Event{}, err
		}
	}
	if e.Type == Reserved && e.CreatedMs == 0 {
		// reserve.lua writes no 'cms': a reservation is created when it happens
		e.CreatedMs = e.AtMs
	}
	if err := e.Validate(); err != nil {
		return Event{}, fmt.Errorf("outbox entry %s: %w", id, err)
	}
	return e, nil
}

// Validate checks that the event is well formed.
func (e Event) Validate() error {
	switch {
	case !e.Type.Valid():
		return fmt.Errorf("unknown event type %q", e.Type)
	case e.ActivityID <= 0:
		return fmt.Errorf("bad activity_id %d", e.ActivityID)
	case e.Epoch < 0:
		return fmt.Errorf("bad epoch %d", e.Epoch)
	case e.EventID == "":
		return fmt.Errorf("empty event_id")
	case !utf8.ValidString(e.EventID) || !utf8.ValidString(e.OrderNo) || !utf8.ValidString(e.RequestID) ||
		!utf8.ValidString(e.TradeNo):
		// JSON would replace the bytes (U+FFFD): the writer would apply another order.
		return fmt.Errorf("event_id, order_no, request_id and trade_no must be valid UTF-8")
	case e.Type == Adjusted:
		if e.Delta == 0 {
			return fmt.Errorf("adjusted event with zero delta")
		}
	case e.Type == Entered:
		if e.UID <= 0 || e.Quantity <= 0 || e.RequestID == "" || e.OrderNo != "" {
			return fmt.Errorf("entered event needs uid, quantity > 0 and request_id, and no order_no")
		}
	default:
		if e.OrderNo == "" || e.Quantity <= 0 || e.UID <= 0 {
			return fmt.Errorf("order event needs order_no, uid and quantity > 0")
		}
	}
	return nil
}

// Key is the Kafka message key: order_no, or the activity for stock adjustments.
func (e Event) Key() string {
	if e.OrderNo != "" {
		return e.OrderNo
	}
	return "a" + strconv.FormatInt(e.ActivityID, 10)
}

// Marshal encodes the event as the Kafka message value.
func (e Event) Marshal() ([]byte, error) { return json.Marshal(e) }

// Unmarshal decodes and validates a Kafka message value.
func Unmarshal(b []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(b, &e); err != nil {
		return Event{}, err
	}
	return e, e.Validate()
}

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
