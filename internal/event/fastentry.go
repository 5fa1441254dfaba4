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

// attrBits numbers the attributes EntryEvents reads: a bit each, to find one twice.
var attrBits = map[string]uint32{FieldType: 1, FieldActivity: 2, FieldSku: 4, FieldOrderNo: 8, FieldUID: 16,
	FieldQuantity: 32, FieldDelta: 64, FieldAt: 128, FieldRequestID: 256, FieldCreated: 512, FieldExpire: 1024,
	FieldEpoch: 2048, FieldSeq: 4096, FieldTradeNo: 8192, FieldTraceParent: 16384}

// parseLine reads one line of key=value pairs (unpack's format) into e, seen and tp; false at
// anything unpack would refuse, an attribute already in seen, an unknown one or a number that
// does not parse.
func parseLine(e *Event, s string, seen *uint32, tp *string) bool {
	for more := true; more; {
		var tok string
		tok, s, more = strings.Cut(s, " ")
		k, v, found := strings.Cut(tok, "=")
		bit := attrBits[k]
		if !found || v == "" || bit == 0 || *seen&bit != 0 {
			return false
		}
		*seen |= bit
		var num *int64
		switch k {
		case FieldType:
			e.Type = Type(v)
		case FieldOrderNo:
			e.OrderNo = v
		case FieldRequestID:
			e.RequestID = v
		case FieldTradeNo:
			e.TradeNo = v
		case FieldTraceParent:
			*tp = v
		case FieldSeq: // the Acker's, not the event's (FromAttributes does not read it either)
		default:
			num = numField(e, k)
		}
		if num != nil {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return false
			}
			*num = n
		}
	}
	return true
}

// numField is e's number of attribute k.
func numField(e *Event, k string) *int64 {
	switch k {
	case FieldActivity:
		return &e.ActivityID
	case FieldSku:
		return &e.SkuID
	case FieldUID:
		return &e.UID
	case FieldQuantity:
		return &e.Quantity
	case FieldDelta:
		return &e.Delta
	case FieldAt:
		return &e.AtMs
	case FieldCreated:
		return &e.CreatedMs
	case FieldExpire:
		return &e.ExpireMs
	default: // FieldEpoch
		return &e.Epoch
	}
}
