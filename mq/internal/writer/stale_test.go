package writer

import (
	"testing"

	"github.com/seckill/seckill/internal/event"
)

// Stale changes: once a rebuild has bumped inventory.epoch, a change made under an older
// epoch is dropped (counted), in a batch with current ones that apply; a change of the
// current epoch, of a newer one, or without one (0) applies.
func TestWriterDropsStaleChanges(t *testing.T) {
	db := newDB(t, 10)
	if _, err := db.DB.Exec("UPDATE `inventory` SET `epoch` = 3 WHERE `activity_id` = ?", testAID); err != nil {
		t.Fatal(err)
	}
	w := New(testConf(t, nil), NewConn(db.DSN), &recorder{})
	at := func(ep int64, ev event.Event) event.Event { ev.Epoch = ep; return ev }
	stale := at(2, orderEvent(event.Reserved, "stale", 1))
	staleAdjust := event.Event{EventID: "1700000000900-0", Type: event.Adjusted, ActivityID: testAID, Delta: 5, AtMs: 1,
		Epoch: 1}
	current := at(3, orderEvent(event.Reserved, "current", 2))
	newer := at(4, orderEvent(event.Reserved, "newer", 1))
	legacy := orderEvent(event.Reserved, "legacy", 1) // no epoch
	if err := w.Apply(stale, current, staleAdjust, newer, legacy); err != nil {
		t.Fatal(err)
	}
	orders := readOrders(t, db)
	if _, ok := orders["stale"]; ok || len(orders) != 3 {
		t.Fatalf("orders %v: want current, newer and legacy, not stale", orders)
	}
	checkCounters(t, db, inventory{6, 4, 0}, 10, " (the stale reservation and adjustment not applied)")
	if w.Stats.Stale.Load() != 2 || w.Stats.Applied.Load() != 3 {
		t.Fatalf("stale %d applied %d, want 2 and 3", w.Stats.Stale.Load(), w.Stats.Applied.Load())
	}
	// A later change of the stale order (its pay) is dropped as well; one of the current
	// epoch for the current order applies.
	if err := w.Apply(at(2, orderEvent(event.Paid, "stale", 1)), at(3, orderEvent(event.Paid, "current", 2))); err != nil {
		t.Fatal(err)
	}
	if got, want := readInventory(t, db, testAID), (inventory{6, 2, 2}); got != want {
		t.Fatalf("inventory %+v, want %+v", got, want)
	}
	if orders := readOrders(t, db); orders["current"] != "paid" || orders["stale"] != "" {
		t.Fatalf("orders %v", orders)
	}
}
