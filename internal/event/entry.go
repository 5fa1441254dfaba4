package event

import (
	"fmt"
	"strconv"
	"strings"
)

// FieldEntry is an outbox stream entry's one field: its value packs the change's attributes,
// "key=value" separated by single spaces, the keys the Field* names (in the order of the
// constants, those of absent attributes left out), for instance
//
//	t=reserved aid=12 sku=7 ono=12-17000000001238c0ffee0123456789abcdef uid=3 qty=1 at=1700000000123
//	rid=req-00000001 ems=1700000900123 ep=2 sq=41
//
// (one line). No value is empty or holds a space: types, numbers, order numbers, request ids
// ([A-Za-z0-9_-]) and traceparents have none. scripts/entry.lua in internal/stock is the same
// format in Lua (packEntry, packOrderEntry), the one copy every script shares; Pack and
// Attributes are the one copy in Go. Entries written before, one stream field per attribute
// (t, aid, ...), are read too (Attributes).
const FieldEntry = "e"

// fieldOrder is the order in which Pack writes the attributes (the Field* constants').
var fieldOrder = []string{FieldType, FieldActivity, FieldSku, FieldOrderNo, FieldUID, FieldQuantity, FieldDelta,
	FieldAt, FieldRequestID, FieldCreated, FieldExpire, FieldEpoch, FieldSeq, FieldTradeNo, FieldTraceParent}

// Pack is the outbox entry of e (its EventID aside) made under the stock hash's change count
// seq, by a request of traceparent traceParent (0 and "": none), as FieldEntry holds it. Zero
// attributes are left out (Attributes reads them back as zero). An error when a value is not
// one Attributes can read back: it holds a space.
func (e Event) Pack(seq int64, traceParent string) (string, error) {
	i := func(n int64) string {
		if n == 0 {
			return ""
		}
		return strconv.FormatInt(n, 10)
	}
	vals := map[string]string{FieldType: string(e.Type), FieldActivity: i(e.ActivityID), FieldSku: i(e.SkuID),
		FieldOrderNo: e.OrderNo, FieldUID: i(e.UID), FieldQuantity: i(e.Quantity), FieldDelta: i(e.Delta),
		FieldAt: i(e.AtMs), FieldRequestID: e.RequestID, FieldCreated: i(e.CreatedMs), FieldExpire: i(e.ExpireMs),
		FieldEpoch: i(e.Epoch), FieldSeq: i(seq), FieldTradeNo: e.TradeNo, FieldTraceParent: traceParent}
	var b strings.Builder
	for _, k := range fieldOrder {
		v := vals[k]
		if v == "" {
			continue
		}
		if strings.ContainsAny(v, " ") {
			return "", fmt.Errorf("outbox entry: %s=%q holds a space", k, v)
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
	}
	return b.String(), nil
}

// A batch entry (reserve.lua writes one per reservation batch, whatever its size) holds several
// events in FieldEntry's value: a first line of the attributes its events share, then one line
// per event of its own attributes, lines separated by BatchSep; each event is the shared
// attributes with its line's (a key in both is refused), for instance
//
//	t=reserved aid=12 sku=7 at=1700000000123 ems=1700000900123 ep=2 sq=41
//	ono=12-1700000000123… uid=3 qty=1 rid=req-00000001
//	ono=12-1700000000123… uid=8 qty=2 rid=req-00000002
//
// Its events share the entry's id (event_id) and its change count (sq: the batch is one change
// of the stock hash). scripts/entry.lua's packBatchHead and batchLine write it; PackBatch and
// EntryAttributes are the Go side.
const BatchSep = "\n"

// batchShared are the attributes PackBatch writes once, on a batch entry's first line: those
// every event of one reserve call has alike.
var batchShared = map[string]bool{FieldType: true, FieldActivity: true, FieldSku: true, FieldAt: true,
	FieldExpire: true, FieldEpoch: true, FieldSeq: true, FieldTraceParent: true}

// PackBatch is the batch entry of events es (at least one), all of one reserve call made under
// change count seq: the attributes of batchShared, alike in every event, once on the first line,
// then each event's others on a line of its own.
func PackBatch(es []Event, seq int64, traceParent string) (string, error) {
	if len(es) == 0 {
		return "", fmt.Errorf("outbox batch entry: no events")
	}
	var head string
	lines := make([]string, 0, len(es)+1)
	for i, e := range es {
		p, err := e.Pack(seq, traceParent)
		if err != nil {
			return "", err
		}
		var shared, own []string
		for _, kv := range strings.Split(p, " ") {
			if k, _, _ := strings.Cut(kv, "="); batchShared[k] {
				shared = append(shared, kv)
			} else {
				own = append(own, kv)
			}
		}
		if h := strings.Join(shared, " "); i == 0 {
			head, lines = h, append(lines, h)
		} else if h != head {
			return "", fmt.Errorf("outbox batch entry: event %d shares %q, not %q", i, h, head)
		}
		lines = append(lines, strings.Join(own, " "))
	}
	return strings.Join(lines, BatchSep), nil
}

// EntryAttributes reads an outbox stream entry's values into the attributes of each event it
// holds: one for the entry of one change (Attributes), one per line after the first for a
// batch entry (BatchSep). An error when any line is malformed.
func EntryAttributes(values map[string]any) ([]map[string]string, error) {
	packed, ok := values[FieldEntry].(string)
	if !ok || !strings.Contains(packed, BatchSep) {
		a, err := Attributes(values)
		if err != nil {
			return nil, err
		}
		return []map[string]string{a}, nil
	}
	if len(values) != 1 {
		return nil, fmt.Errorf("outbox entry: field %s beside %d others", FieldEntry, len(values)-1)
	}
	lines := strings.Split(packed, BatchSep)
	shared, err := unpack(lines[0])
	if err != nil {
		return nil, err
	}
	out := make([]map[string]string, 0, len(lines)-1)
	for _, l := range lines[1:] {
		a, err := unpack(l)
		if err != nil {
			return nil, err
		}
		for k, v := range shared {
			if _, dup := a[k]; dup {
				return nil, fmt.Errorf("outbox batch entry: %s both shared and an event's", k)
			}
			a[k] = v
		}
		out = append(out, a)
	}
	return out, nil
}

// EntryShared reads what every event of an outbox stream entry shares: a batch entry's
// first line (only it: the lines of the events are not read), the attributes of an entry of
// one change. An error when that part is malformed; a malformed event line is not one.
func EntryShared(values map[string]any) (map[string]string, error) {
	packed, ok := values[FieldEntry].(string)
	if !ok || !strings.Contains(packed, BatchSep) {
		return Attributes(values)
	}
	if len(values) != 1 {
		return nil, fmt.Errorf("outbox entry: field %s beside %d others", FieldEntry, len(values)-1)
	}
	head, _, _ := strings.Cut(packed, BatchSep)
	return unpack(head)
}

// FromEntry returns the events of outbox entry id (EntryAttributes, then FromAttributes).
func FromEntry(id string, values map[string]any) ([]Event, error) {
	as, err := EntryAttributes(values)
	if err != nil {
		return nil, fmt.Errorf("outbox entry %s: %w", id, err)
	}
	evs := make([]Event, len(as))
	for i, a := range as {
		if evs[i], err = FromAttributes(id, a); err != nil {
			return nil, err
		}
	}
	return evs, nil
}

// EntryType is the type of an outbox entry's events (a batch entry's are all of one type), read
// without parsing the rest; "" when the entry does not start with it.
func EntryType(values map[string]any) Type {
	packed, ok := values[FieldEntry].(string)
	if !ok {
		t, _ := values[FieldType].(string)
		return Type(t)
	}
	first, _, _ := strings.Cut(packed, " ")
	first, _, _ = strings.Cut(first, BatchSep)
	t, ok := strings.CutPrefix(first, FieldType+"=")
	if !ok {
		return ""
	}
	return Type(t)
}

// Attributes reads an outbox stream entry's values (as XRANGE or XREADGROUP return them) into
// its attributes, key -> value: the one field FieldEntry unpacked, or, for an entry written
// before entries were packed, its fields as they are. An error when FieldEntry is not a packed
// entry of one event (a batch entry: EntryAttributes), or stands beside other fields.
func Attributes(values map[string]any) (map[string]string, error) {
	packed, ok := values[FieldEntry]
	if !ok {
		out := make(map[string]string, len(values))
		for k, v := range values {
			out[k] = fmt.Sprint(v)
		}
		return out, nil
	}
	if len(values) != 1 {
		return nil, fmt.Errorf("outbox entry: field %s beside %d others", FieldEntry, len(values)-1)
	}
	s := fmt.Sprint(packed)
	if strings.Contains(s, BatchSep) {
		return nil, fmt.Errorf("outbox entry: a batch entry of %d events (EntryAttributes)",
			strings.Count(s, BatchSep))
	}
	return unpack(s)
}

// unpack reads one line of a packed entry: key=value pairs separated by single spaces.
func unpack(s string) (map[string]string, error) {
	out := make(map[string]string, 14)
	for more := true; more; {
		var tok string
		tok, s, more = strings.Cut(s, " ")
		k, v, ok := strings.Cut(tok, "=")
		switch _, dup := out[k]; {
		case !ok || k == "" || v == "":
			return nil, fmt.Errorf("outbox entry: %q is not key=value", tok)
		case dup:
			return nil, fmt.Errorf("outbox entry: %s twice", k)
		}
		out[k] = v
	}
	return out, nil
}
