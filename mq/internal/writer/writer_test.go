package writer

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
)

const testAID = 5

// recorder is a dead-letter topic that keeps what it is sent.
type recorder struct {
	mu   sync.Mutex
	msgs []kafkax.Message
}

func (r *recorder) Send(_ context.Context, msgs ...kafkax.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, msgs...)
	return nil
}

func (r *recorder) letters(t *testing.T) []kafkax.DeadLetter {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []kafkax.DeadLetter
	for _, m := range r.msgs {
		d, err := kafkax.ParseDeadLetter(m.Value)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

type inventory struct{ Available, Locked, Sold int64 }

// newDB is a fresh database with one activity whose inventory is available units.
func newDB(t testing.TB, available int64) *testenv.Database {
	t.Helper()
	db := testenv.MySQL(t)
	if _, err := db.DB.Exec("INSERT INTO `activity` (`id`, `sku_id`, `name`, `total`, `start_time`, `end_time`) "+
		"VALUES (?, 1, 'w', ?, 0, 1)", testAID, available); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DB.Exec("INSERT INTO `inventory` (`activity_id`, `available`) VALUES (?, ?)",
		testAID, available); err != nil {
		t.Fatal(err)
	}
	return db
}

func readInventory(t testing.TB, db *testenv.Database, aid int64) inventory {
	t.Helper()
	var inv inventory
	if err := db.DB.QueryRow("SELECT `available`, `locked`, `sold` FROM `inventory` WHERE `activity_id` = ?",
		aid).Scan(&inv.Available, &inv.Locked, &inv.Sold); err != nil {
		t.Fatal(err)
	}
	return inv
}

func readOrders(t testing.TB, db *testenv.Database) map[string]string {
	t.Helper()
	rows, err := db.DB.Query("SELECT `order_no`, `status` FROM `seckill_order`")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var o, s string
		if err := rows.Scan(&o, &s); err != nil {
			t.Fatal(err)
		}
		out[o] = s
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkCounters fails t unless MySQL holds inventory want and activity.total total (why: what
// the numbers show).
func checkCounters(t testing.TB, db *testenv.Database, want inventory, total int64, why string) {
	t.Helper()
	if got := readInventory(t, db, testAID); got != want {
		t.Fatalf("inventory %+v, want %+v%s", got, want, why)
	}
	if got := readTotal(t, db); got != total {
		t.Fatalf("activity.total %d, want %d%s", got, total, why)
	}
}

func readTotal(t testing.TB, db *testenv.Database) int64 {
	var total int64
	if err := db.DB.QueryRow("SELECT `total` FROM `activity` WHERE `id` = ?", testAID).Scan(&total); err != nil {
		t.Fatal(err)
	}
	return total
}

var seq int

func orderEvent(typ event.Type, orderNo string, q int64) event.Event {
	seq++
	return event.Event{EventID: fmt.Sprintf("%d-%d", 1700000000000+seq, 0), Type: typ, ActivityID: testAID,
		SkuID: 1, OrderNo: orderNo, UID: 42, Quantity: q, AtMs: 1700000000000, RequestID: "req-" + orderNo,
		CreatedMs: 1700000000123, ExpireMs: 1700000900123}
}

// Every row of the table through MySQL: whatever the arrival order, each event delivered
// twice, one transaction per event or all in one, the result is that of one in-order
// delivery.
func TestWriterOrderIndependentAndIdempotent(t *testing.T) {
	const stock, q = 100, 3
	for _, tc := range []struct {
		name   string
		events []event.Type // in the order Redis produced them
		status string
		inv    inventory
	}{
		{"reserved", []event.Type{event.Reserved}, domain.StateReserved, inventory{stock - q, q, 0}},
		{"reserved,paid", []event.Type{event.Reserved, event.Paid}, domain.StatePaid, inventory{stock - q, 0, q}},
		{"reserved,cancelled", []event.Type{event.Reserved, event.Cancelled}, domain.StateCancelled, inventory{stock, 0, 0}},
		{"reserved,expired", []event.Type{event.Reserved, event.Expired}, domain.StateExpired, inventory{stock, 0, 0}},
	} {
		deliveries := map[string]func([]event.Event) [][]event.Event{
			"in order, once": func(evs []event.Event) [][]event.Event {
				var out [][]event.Event
				for _, e := range evs {
					out = append(out, []event.Event{e})
				}
				return out
			},
			"reversed, twice, one tx each": func(evs []event.Event) [][]event.Event {
				var out [][]event.Event
				for i := len(evs) - 1; i >= 0; i-- {
					out = append(out, []event.Event{evs[i]}, []event.Event{evs[i]})
				}
				return out
			},
			"reversed, twice, one tx": func(evs []event.Event) [][]event.Event {
				var all []event.Event
				for i := len(evs) - 1; i >= 0; i-- {
					all = append(all, evs[i], evs[i])
				}
				return [][]event.Event{all}
			},
			"in order then again reversed": func(evs []event.Event) [][]event.Event {
				var out [][]event.Event
				for _, e := range evs {
					out = append(out, []event.Event{e})
				}
				for i := len(evs) - 1; i >= 0; i-- {
					out = append(out, []event.Event{evs[i]})
				}
				return out
			},
		}
		for dname, deliver := range deliveries {
			t.Run(tc.name+"/"+dname, func(t *testing.T) {
				db := newDB(t, stock)
				w := New(testConf(t, nil), NewConn(db.DSN), &recorder{})
				ono := fmt.Sprintf("%d-1700000000000abcdef01", testAID)
				var evs []event.Event
				for _, typ := range tc.events {
					evs = append(evs, orderEvent(typ, ono, q))
				}
				for _, tx := range deliver(evs) {
					if err := w.Apply(tx...); err != nil {
						t.Fatalf("apply: %v", err)
					}
				}
				if got := readOrders(t, db)[ono]; got != tc.status {
					t.Fatalf("status %q, want %q", got, tc.status)
				}
				if got := readInventory(t, db, testAID); got != tc.inv {
					t.Fatalf("inventory %+v, want %+v", got, tc.inv)
				}
				var placed, expire int64
				var rid string
				if err := db.DB.QueryRow("SELECT `placed_at`, `expire_at`, `request_id` FROM `seckill_order` WHERE `order_no` = ?",
					ono).Scan(&placed, &expire, &rid); err != nil {
					t.Fatal(err)
				}
				if placed != 1700000000 || expire != 1700000900 || rid != "req-"+ono {
					t.Fatalf("row placed_at %d expire_at %d request_id %q: not the event's (seconds)", placed, expire, rid)
				}
			})
		}
	}
}

func TestWriterAdjustmentsApplyOncePerEventID(t *testing.T) {
	db := newDB(t, 10)
	w := New(testConf(t, nil), NewConn(db.DSN), &recorder{})
	add := event.Event{EventID: "1700000000001-0", Type: event.Adjusted, ActivityID: testAID, Delta: 7, AtMs: 1}
	take := event.Event{EventID: "1700000000002-0", Type: event.Adjusted, ActivityID: testAID, Delta: -4, AtMs: 2}
	for _, tx := range [][]event.Event{{take, add}, {add}, {take, take}} {
		if err := w.Apply(tx...); err != nil {
			t.Fatal(err)
		}
	}
	checkCounters(t, db, inventory{13, 0, 0}, 13, "")
	if w.Stats.Applied.Load() != 2 || w.Stats.Duplicates.Load() != 3 {
		t.Fatalf("applied %d duplicates %d, want 2 and 3", w.Stats.Applied.Load(), w.Stats.Duplicates.Load())
	}
}

// run starts the writer's flusher until the test ends.
func run(t testing.TB, w *Writer) {
	done := make(chan struct{})
	go func() { defer close(done); w.Start() }()
	t.Cleanup(func() { w.Stop(); <-done })
}

// consumeAll delivers values through Consume from n goroutines released together.
func consumeAll(t testing.TB, w *Writer, values []string, n int) {
	t.Helper()
	work := make(chan string)
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, len(values))
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for v := range work {
				if err := w.Consume(context.Background(), "", v); err != nil {
					errs <- err
				}
			}
		}()
	}
	close(start)
	for _, v := range values {
		work <- v
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("consume: %v", err)
	}
}

func marshal(t testing.TB, ev event.Event) string {
	b, err := ev.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
