package event_test

import (
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/event"
)

// sampleEvents are one event of each shape the scripts write.
var sampleEvents = []event.Event{
	{Type: event.Reserved, ActivityID: 12, SkuID: 7, OrderNo: "12-1700000000123c0ffee00deadbeefcafe0123", UID: 3,
		Quantity: 2, AtMs: 1700000000123, RequestID: "req_0000-01", CreatedMs: 1700000000123,
		ExpireMs: 1700000900123, Epoch: 4},
	{Type: event.Paid, ActivityID: 12, SkuID: 7, OrderNo: "12-1700000000123c0ffee00deadbeefcafe0123", UID: 3,
		Quantity: 2, AtMs: 1700000000500, RequestID: "req_0000-01", CreatedMs: 1700000000123,
		ExpireMs: 1700000900123, Epoch: 4},
	{Type: event.Adjusted, ActivityID: 12, SkuID: 7, Delta: -5, AtMs: 1700000000600},
	{Type: event.Entered, ActivityID: 12, SkuID: 7, UID: 9, Quantity: 1, AtMs: 1700000000700,
		RequestID: "req-00000009", Epoch: 4},
}

// An event packed into one stream field reads back as itself, with its change count and
// trace context; the same event written the way entries were written before (one stream
// field per attribute: entries already in a stream during a rolling upgrade) reads back the
// same.
func TestFromStreamReadsPackedAndFieldEntries(t *testing.T) {
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	for _, want := range sampleEvents {
		want.EventID = "1700000000123-4"
		packed, err := want.Pack(41, tp)
		if err != nil {
			t.Fatal(err)
		}
		got, err := event.FromStream(want.EventID, map[string]any{event.FieldEntry: packed})
		if err != nil || got != want {
			t.Fatalf("packed %q: %+v, %v; want %+v", packed, got, err, want)
		}
		a, err := event.Attributes(map[string]any{event.FieldEntry: packed})
		if err != nil || a[event.FieldSeq] != "41" || a[event.FieldTraceParent] != tp {
			t.Fatalf("packed %q: attributes %v, %v; want sq 41 and tp", packed, a, err)
		}
		fields := map[string]any{}
		for _, kv := range strings.Split(packed, " ") {
			k, v, _ := strings.Cut(kv, "=")
			fields[k] = v
		}
		if got, err := event.FromStream(want.EventID, fields); err != nil || got != want {
			t.Fatalf("fields %v: %+v, %v; want %+v", fields, got, err, want)
		}
	}
}

// Pack writes the attributes in one order, zero ones left out, and refuses a value that
// would not read back.
func TestPackFormat(t *testing.T) {
	got, err := sampleEvents[2].Pack(0, "")
	if want := "t=adjusted aid=12 sku=7 d=-5 at=1700000000600"; err != nil || got != want {
		t.Fatalf("Pack: %q, %v; want %q", got, err, want)
	}
	bad := sampleEvents[0]
	bad.RequestID = "req 0001"
	if p, err := bad.Pack(1, ""); err == nil {
		t.Fatalf("a request id with a space packed as %q", p)
	}
	if p, err := sampleEvents[0].Pack(1, "00 x"); err == nil {
		t.Fatalf("a traceparent with a space packed as %q", p)
	}
}

// A packed entry that is not key=value pairs separated by single spaces is refused (the relay
// dead-letters it), and so is one whose field 'e' stands beside other fields.
func TestAttributesRefuseMalformedEntries(t *testing.T) {
	for _, v := range []map[string]any{
		{event.FieldEntry: ""},
		{event.FieldEntry: "t=adjusted aid=9 d=5 at=1 x"},
		{event.FieldEntry: "t=adjusted aid=9  d=5 at=1"},
		{event.FieldEntry: "t=adjusted aid=9 d=5 at=1 "},
		{event.FieldEntry: " t=adjusted aid=9 d=5 at=1"},
		{event.FieldEntry: "t=adjusted aid=9 d= at=1"},
		{event.FieldEntry: "t=adjusted aid=9 =5 at=1"},
		{event.FieldEntry: "t=adjusted aid=9 d=5 at=1 d=6"},
		{event.FieldEntry: "t=adjusted aid=9 d=5 at=1", event.FieldType: "adjusted"},
	} {
		if a, err := event.Attributes(v); err == nil {
			t.Errorf("%q: read as %v", v, a)
		}
		if e, err := event.FromStream("1-0", v); err == nil {
			t.Errorf("%q: read as %+v", v, e)
		}
	}
	// a value may hold '=' (only the first one separates)
	a, err := event.Attributes(map[string]any{event.FieldEntry: "t=adjusted x=a=b"})
	if err != nil || a["x"] != "a=b" {
		t.Fatalf("x=a=b: %v, %v", a, err)
	}
}

// FuzzPackedEntry: a packed entry either is refused or reads back as attributes that pack to
// the same string.
func FuzzPackedEntry(f *testing.F) {
	f.Add("t=reserved aid=1 sku=2 ono=1-deadbeef uid=3 qty=1 at=1700000000000 rid=req-00000001 sq=5")
	f.Add("t=adjusted aid=1 d=-5 at=1")
	f.Add("t=x  y=z")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := event.Attributes(map[string]any{event.FieldEntry: s})
		if err != nil {
			return
		}
		n := 0
		for k, v := range a {
			if k == "" || v == "" || strings.ContainsAny(k, " =") || strings.Contains(v, " ") {
				t.Fatalf("%q: attribute %q=%q", s, k, v)
			}
			n += len(k) + 1 + len(v)
		}
		if n+len(a)-1 != len(s) {
			t.Fatalf("%q: attributes %v do not account for every byte", s, a)
		}
	})
}

// A batch entry is its shared line and one line per event: each event is the shared attributes
// with its own, in line order, all of the entry's id; EntryType reads the type alone. A batch
// entry whose line is empty or malformed, or names a shared key again, is refused whole (the
// relay dead-letters it), and Attributes, the reader of one event, refuses a batch entry.
func TestBatchEntries(t *testing.T) {
	one, two := sampleEvents[0], sampleEvents[0]
	two.OrderNo, two.UID, two.Quantity, two.RequestID = "12-1700000000123c0ffee00deadbeefcafe0456", 8, 1, "req-2"
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	packed, err := event.PackBatch([]event.Event{one, two}, 41, tp)
	if err != nil || strings.Count(packed, event.BatchSep) != 2 {
		t.Fatalf("PackBatch: %q, %v", packed, err)
	}
	v := map[string]any{event.FieldEntry: packed}
	evs, err := event.FromEntry("1700000000123-4", v)
	if err != nil || len(evs) != 2 {
		t.Fatalf("FromEntry: %+v, %v", evs, err)
	}
	for i, want := range []event.Event{one, two} {
		want.EventID = "1700000000123-4"
		if evs[i] != want {
			t.Errorf("event %d: %+v, want %+v", i, evs[i], want)
		}
	}
	as, err := event.EntryAttributes(v)
	if err != nil || as[1][event.FieldSeq] != "41" || as[1][event.FieldTraceParent] != tp {
		t.Fatalf("attributes %v, %v; want the shared sq and tp in each", as, err)
	}
	if typ := event.EntryType(v); typ != event.Reserved {
		t.Fatalf("EntryType %q", typ)
	}
	if _, err := event.Attributes(v); err == nil {
		t.Fatal("Attributes read a batch entry as one event")
	}
	head, _, _ := strings.Cut(packed, event.BatchSep)
	for _, bad := range []string{
		head + event.BatchSep,
		head + event.BatchSep + event.BatchSep + "ono=12-1 uid=3 qty=1 rid=r",
		head + event.BatchSep + "ono=12-1 uid=3 qty=1 rid=r aid=12",
		head + event.BatchSep + "ono=12-1 uid=3 qty=1  rid=r",
		head + event.BatchSep + "ono=12-1 uid=3 qty=0 rid=r",
	} {
		if evs, err := event.FromEntry("1-0", map[string]any{event.FieldEntry: bad}); err == nil {
			t.Errorf("%q read as %+v", bad, evs)
		}
	}
	if _, err := event.PackBatch([]event.Event{one, sampleEvents[1]}, 41, ""); err == nil {
		t.Error("PackBatch packed events that do not share their type and times")
	}
}
