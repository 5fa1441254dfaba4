package event

import (
	"strconv"
	"strings"
)

// EntryEvents is FromEntry without its maps, for the producers (the Acker and the relay) that
// read every event of every entry: the events of outbox entry id and the traceparent its
// events share ("" when none). ok is false for anything but a well-formed packed entry of the
// attributes the scripts write, each once, the traceparent only among the shared ones: the
// caller then reads the entry with FromEntry (EntryAttributes), which decides it as before,
// with its error. When ok, the events are FromEntry's (FuzzEntryEvents).
func EntryEvents(id string, values map[string]any) (evs []Event, traceParent string, ok bool) {
	packed, isString := values[FieldEntry].(string)
	if !isString || len(values) != 1 {
		return nil, "", false
	}
	head, rest, batch := strings.Cut(packed, BatchSep)
	var shared Event
	var sharedSeen uint32
	if !parseLine(&shared, head, &sharedSeen, &traceParent) {
		return nil, "", false
	}
	if !batch {
		return finish(id, []Event{shared}, traceParent)
	}
	evs = make([]Event, 0, strings.Count(rest, BatchSep)+1)
	for more := true; more; {
		var line string
		line, rest, more = strings.Cut(rest, BatchSep)
		e, seen := shared, sharedSeen
		var tp string
		if !parseLine(&e, line, &seen, &tp) || tp != "" {
			return nil, "", false
		}
		evs = append(evs, e)
	}
	return finish(id, evs, traceParent)
}

// finish completes and validates evs as FromAttributes does.
func finish(id string, evs []Event, traceParent string) ([]Event, string, bool) {
	for i := range evs {
		e := &evs[i]
		e.EventID = id
		if e.Type == Reserved && e.CreatedMs == 0 {
			e.CreatedMs = e.AtMs // reserve.lua writes no 'cms' (FromAttributes)
		}
		if e.Validate() != nil {
			return nil, "", false
		}
	}
	return evs, traceParent, true
}

// attr is an attribute EntryEvents reads: its bit (to find one twice) and the event's field
// it sets, a number (num) or a string (str), as 1 + its index in fields' lists; neither: the
// traceparent or the Acker's change count.
type attr struct {
	bit      uint32
	num, str int
}

var attrs = map[string]attr{
	FieldActivity: {bit: 1 << 0, num: 1}, FieldSku: {bit: 1 << 1, num: 2}, FieldUID: {bit: 1 << 2, num: 3},
	FieldQuantity: {bit: 1 << 3, num: 4}, FieldDelta: {bit: 1 << 4, num: 5}, FieldAt: {bit: 1 << 5, num: 6},
	FieldCreated: {bit: 1 << 6, num: 7}, FieldExpire: {bit: 1 << 7, num: 8}, FieldEpoch: {bit: 1 << 8, num: 9},
	FieldType: {bit: 1 << 9, str: 1}, FieldOrderNo: {bit: 1 << 10, str: 2}, FieldRequestID: {bit: 1 << 11, str: 3},
	FieldTradeNo:     {bit: 1 << 12, str: 4},
	FieldSeq:         {bit: 1 << 13}, // the Acker's, not the event's (FromAttributes does not read it)
	FieldTraceParent: {bit: 1 << 14},
}

// fields are e's number and string fields in attrs' order.
func fields(e *Event) ([9]*int64, [4]*string) {
	return [9]*int64{&e.ActivityID, &e.SkuID, &e.UID, &e.Quantity, &e.Delta, &e.AtMs, &e.CreatedMs, &e.ExpireMs,
		&e.Epoch}, [4]*string{(*string)(&e.Type), &e.OrderNo, &e.RequestID, &e.TradeNo}
}

// parseLine reads one line of key=value pairs (unpack's format) into e, seen and tp; false at
// anything unpack would refuse, an attribute already in seen, an unknown one or a number that
// does not parse (as FromAttributes would refuse it).
func parseLine(e *Event, s string, seen *uint32, tp *string) bool {
	nums, strs := fields(e)
	for more := true; more; {
		var tok string
		tok, s, more = strings.Cut(s, " ")
		k, v, found := strings.Cut(tok, "=")
		a, known := attrs[k]
		if !found || v == "" || !known || *seen&a.bit != 0 {
			return false
		}
		*seen |= a.bit
		switch {
		case a.num > 0:
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return false
			}
			*nums[a.num-1] = n
		case a.str > 0:
			*strs[a.str-1] = v
		case k == FieldTraceParent:
			*tp = v
		}
	}
	return true
}
