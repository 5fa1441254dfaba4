package writer

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/zeromicro/go-zero/core/stores/sqlx"

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

// A batch of payments from the provider to orders that exist keeps every trade_no in one
// statement: the batch costs the same statements (status, trade_no, inventory) whatever
// its size, as a batch of the buyers' own payments does.
func TestWriterKeepsTradeNosInOneStatement(t *testing.T) {
	const n = 40
	db := newDB(t, 100)
	var execs atomic.Int64
	w := New(testConf(t, nil), countingConn{SqlConn: NewConn(db.DSN), execs: &execs}, &recorder{})
	reserved, paid := make([]event.Event, n), make([]event.Event, n)
	for i := range n {
		ono := fmt.Sprintf("%d-1700000000000abcd%04d", testAID, i)
		reserved[i] = orderEvent(event.Reserved, ono, 1)
		paid[i] = orderEvent(event.Paid, ono, 1)
		paid[i].TradeNo = fmt.Sprintf("trade-%d", i)
	}
	if err := w.Apply(reserved...); err != nil {
		t.Fatal(err)
	}
	execs.Store(0)
	if err := w.Apply(paid...); err != nil {
		t.Fatal(err)
	}
	if got := execs.Load(); got != 3 {
		t.Fatalf("%d payments took %d statements, want 3 (status, trade_no, inventory)", n, got)
	}
	var kept int
	if err := db.DB.QueryRow("SELECT COUNT(*) FROM `seckill_order` WHERE `status` = 'paid' AND " +
		"`trade_no` = CONCAT('trade-', CAST(SUBSTRING(`order_no`, -4) AS UNSIGNED))").Scan(&kept); err != nil {
		t.Fatal(err)
	}
	if kept != n {
		t.Fatalf("%d of %d orders paid with their own trade_no", kept, n)
	}
}

// countingConn counts the statements executed in its transactions.
type countingConn struct {
	sqlx.SqlConn
	execs *atomic.Int64
}

func (c countingConn) TransactCtx(ctx context.Context, fn func(context.Context, sqlx.Session) error) error {
	return c.SqlConn.TransactCtx(ctx, func(ctx context.Context, s sqlx.Session) error {
		return fn(ctx, countingSession{Session: s, execs: c.execs})
	})
}

type countingSession struct {
	sqlx.Session
	execs *atomic.Int64
}

func (s countingSession) ExecCtx(ctx context.Context, query string, args ...any) (sql.Result, error) {
	s.execs.Add(1)
	return s.Session.ExecCtx(ctx, query, args...)
}
