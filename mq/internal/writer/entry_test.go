package writer

import (
	"testing"

	"github.com/seckill/seckill/internal/event"
)

// An entered event records the buyer's entry in draw_entry once: a redelivery, or a second
// event of the same buyer, changes nothing, and no stock moves.
func TestWriterRecordsDrawEntriesOnce(t *testing.T) {
	db := newDB(t, 10)
	w := New(testConf(t, nil), NewConn(db.DSN), &recorder{})
	a := event.Event{EventID: "1700000000001-0", Type: event.Entered, ActivityID: testAID, UID: 5, Quantity: 2,
		RequestID: "entry-00000005", AtMs: 1}
	b := event.Event{EventID: "1700000000002-0", Type: event.Entered, ActivityID: testAID, UID: 6, Quantity: 1,
		RequestID: "entry-00000006", AtMs: 2}
	for _, tx := range [][]event.Event{{a}, {a, b}, {b}} {
		if err := w.Apply(tx...); err != nil {
			t.Fatal(err)
		}
	}
	var n, q int64
	if err := db.DB.QueryRow("SELECT COUNT(*), COALESCE(SUM(`quantity`), 0) FROM `draw_entry` WHERE `activity_id` = ?",
		testAID).Scan(&n, &q); err != nil {
		t.Fatal(err)
	}
	var rid string
	if err := db.DB.QueryRow("SELECT `request_id` FROM `draw_entry` WHERE `uid` = 5").Scan(&rid); err != nil {
		t.Fatal(err)
	}
	if n != 2 || q != 3 || rid != a.RequestID {
		t.Fatalf("draw_entry: %d rows, quantity %d, uid 5's request id %q; want 2, 3, %s", n, q, rid, a.RequestID)
	}
	if got, want := readInventory(t, db, testAID), (inventory{10, 0, 0}); got != want {
		t.Fatalf("an entry moved stock: %+v", got)
	}
	if w.Stats.Applied.Load() != 2 || w.Stats.Duplicates.Load() != 2 {
		t.Fatalf("applied %d duplicates %d, want 2 and 2", w.Stats.Applied.Load(), w.Stats.Duplicates.Load())
	}
}
