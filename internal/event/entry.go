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

// Attributes reads an outbox stream entry's values (as XRANGE or XREADGROUP return them) into
// its attributes, key -> value: the one field FieldEntry unpacked, or, for an entry written
// before entries were packed, its fields as they are. An error when FieldEntry is not a packed
// entry, or stands beside other fields.
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
