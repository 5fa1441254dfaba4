package event_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/event"
)

// packedBatch is the entry of a reserve call of n items, as reserve.lua writes it.
func packedBatch(t testing.TB, n int) string { return stocktest.PackedBatch(t, 12, n) }

// sameAsFromEntry fails unless EntryEvents decides packed as FromEntry does, when it decides
// at all: the same events, and each event's traceparent (EntryAttributes) the one returned.
func sameAsFromEntry(t *testing.T, packed string) (ok bool) {
	t.Helper()
	values := map[string]any{event.FieldEntry: packed}
	evs, tp, ok := event.EntryEvents("1700000000123-4", values)
	if !ok {
		return false
	}
	want, err := event.FromEntry("1700000000123-4", values)
	if err != nil {
		t.Fatalf("%q: EntryEvents read %+v, FromEntry refused it: %v", packed, evs, err)
	}
	if !reflect.DeepEqual(evs, want) {
		t.Fatalf("%q: EntryEvents %+v, FromEntry %+v", packed, evs, want)
	}
	as, _ := event.EntryAttributes(values)
	for i, a := range as {
		if a[event.FieldTraceParent] != tp {
			t.Fatalf("%q: event %d's traceparent %q, EntryEvents %q", packed, i, a[event.FieldTraceParent], tp)
		}
	}
	return true
}

// TestEntryEventsReadsWhatTheScriptsWrite: the producers' fast path takes the entries the
// scripts write (a batch, a change of one event, one without a traceparent) and reads them
// as FromEntry does; anything else it leaves to FromEntry.
func TestEntryEventsReadsWhatTheScriptsWrite(t *testing.T) {
	one, err := event.Event{Type: event.Paid, ActivityID: 3, SkuID: 1, OrderNo: "3-ab", UID: 9, Quantity: 2,
		AtMs: 5, RequestID: "q", CreatedMs: 4, ExpireMs: 6, Epoch: 1, TradeNo: "T1"}.Pack(7, stocktest.TraceParent)
	if err != nil {
		t.Fatal(err)
	}
	adj, err := event.Event{Type: event.Adjusted, ActivityID: 3, SkuID: 1, Delta: -4, AtMs: 5}.Pack(8, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, packed := range []string{packedBatch(t, 1), packedBatch(t, 32), one, adj} {
		if !sameAsFromEntry(t, packed) {
			t.Errorf("%q: EntryEvents left a script's entry to FromEntry", packed)
		}
	}
	batch := packedBatch(t, 3)
	head, _, _ := strings.Cut(batch, event.BatchSep)
	for _, bad := range []string{
		batch + event.BatchSep,                                    // an empty line
		strings.Replace(batch, "uid=1001", "uid=x", 1),            // not a number
		strings.Replace(batch, "uid=1001", "uid=1001 uid=1", 1),   // twice
		strings.Replace(batch, "uid=1001", "uid=1001 aid=12", 1),  // shared and the event's
		strings.Replace(batch, "uid=1001", "uid=1001 zz=1", 1),    // unknown: FromEntry decides
		strings.Replace(batch, "uid=1001", "uid=1001 tp=00-x", 1), // an event's own traceparent
		strings.Replace(batch, "uid=1001", "uid=1001  ", 1),       // a double space
		strings.Replace(head, "t=reserved", "t=bogus", 1),         // invalid
	} {
		if sameAsFromEntry(t, bad) {
			t.Errorf("%q: EntryEvents read it", bad)
		}
	}
}

// FuzzEntryEvents: whatever EntryEvents reads, FromEntry reads the same way.
func FuzzEntryEvents(f *testing.F) {
	f.Add(packedBatch(f, 2))
	f.Add("t=adjusted aid=3 sku=1 d=-4 at=5 sq=8")
	f.Add("t=reserved aid=1 sku=2 ono=1-x uid=3 qty=1 at=9 rid=r\nuid=4")
	f.Fuzz(func(t *testing.T, packed string) { sameAsFromEntry(t, packed) })
}

// TestEntrySharedReadsOnlyTheHead: a batch entry's shared attributes come from its first line
// alone (a malformed event line is the Acker's to refuse); a malformed first line is an error.
func TestEntrySharedReadsOnlyTheHead(t *testing.T) {
	batch := packedBatch(t, 3)
	a, err := event.EntryShared(map[string]any{event.FieldEntry: batch + event.BatchSep + "uid"})
	if err != nil || a[event.FieldEpoch] != "2" || a[event.FieldSeq] != "41" || a[event.FieldOrderNo] != "" {
		t.Fatalf("EntryShared of a batch: %v, %v; want its head (ep=2 sq=41, no ono)", a, err)
	}
	if _, err := event.EntryShared(map[string]any{event.FieldEntry: "t=reserved ep" + batch[10:]}); err == nil {
		t.Fatal("EntryShared read a malformed head")
	}
	one := map[string]any{event.FieldEntry: "t=adjusted aid=3 sku=1 d=-4 at=5 ep=6 sq=8"}
	if a, err := event.EntryShared(one); err != nil || a[event.FieldSeq] != "8" || a[event.FieldDelta] != "-4" {
		t.Fatalf("EntryShared of one change: %v, %v; want its attributes", a, err)
	}
}
