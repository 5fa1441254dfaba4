package writer

import (
	"fmt"
	"testing"

	"github.com/seckill/seckill/internal/event"
)

// A paid event of the provider's notification keeps its trade_no with the order, whether the
// row exists (reserved applied before) or is created from the batch, and a duplicate changes
// nothing; a buyer's own pay leaves it "".
func TestWriterKeepsTheTradeNo(t *testing.T) {
	db := newDB(t, 100)
	w := New(testConf(t, nil), NewConn(db.DSN), &recorder{})
	paid := func(ono, tradeNo string) event.Event {
		e := orderEvent(event.Paid, ono, 1)
		e.TradeNo = tradeNo
		return e
	}
	existing, fresh, own := fmt.Sprintf("%d-1700000000000abcdef02", testAID),
		fmt.Sprintf("%d-1700000000000abcdef03", testAID), fmt.Sprintf("%d-1700000000000abcdef04", testAID)
	for _, batch := range [][]event.Event{
		{orderEvent(event.Reserved, existing, 1)},
		{paid(existing, "trade-existing")},
		{orderEvent(event.Reserved, fresh, 1), paid(fresh, "trade-fresh")},
		{orderEvent(event.Reserved, own, 1), orderEvent(event.Paid, own, 1)},
		{paid(existing, "trade-existing"), paid(fresh, "trade-fresh")}, // again: duplicates
	} {
		if err := w.Apply(batch...); err != nil {
			t.Fatalf("apply: %v", err)
		}
	}
	for ono, want := range map[string]string{existing: "trade-existing", fresh: "trade-fresh", own: ""} {
		var status, tradeNo string
		if err := db.DB.QueryRow("SELECT `status`, `trade_no` FROM `seckill_order` WHERE `order_no` = ?", ono).
			Scan(&status, &tradeNo); err != nil {
			t.Fatal(err)
		}
		if status != "paid" || tradeNo != want {
			t.Fatalf("order %s: %s %q, want paid %q", ono, status, tradeNo, want)
		}
	}
	if got := readInventory(t, db, testAID); got != (inventory{97, 0, 3}) {
		t.Fatalf("inventory %+v", got)
	}
}
