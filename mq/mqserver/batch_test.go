package mqserver

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
)

func orderMsg(t testing.TB, activity int64, i int, typ event.Type, n int) kafkax.Message {
	t.Helper()
	ono := fmt.Sprintf("%d-1700000000000%08x", activity, i)
	ev := event.Event{EventID: fmt.Sprintf("17000%08d-%d", i, n), Type: typ, ActivityID: activity, SkuID: 1,
		OrderNo: ono, UID: int64(i + 1), Quantity: 1, AtMs: 1700000000000, RequestID: "r" + ono,
		CreatedMs: 1700000000000, ExpireMs: 1700000900000}
	v, err := ev.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return kafkax.Message{Key: []byte(ev.Key()), Value: v}
}

func send(t testing.TB, brokers []string, msgs []kafkax.Message) {
	t.Helper()
	p, err := kafkax.NewProducer(producerConf(t, brokers))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Send(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
}

// Shuffled (a pay or cancel before its reservation) and duplicated deliveries through
// Kafka: the writer applies each change once, in transactions of hundreds of events.
func TestBatchedShuffledDuplicatedDeliveries(t *testing.T) {
	brokers := testenv.Kafka(t, 8)
	db := testenv.MySQL(t)
	const orders = 3000
	seed(t, db, orders)
	var msgs []kafkax.Message
	for i := range orders {
		second := event.Paid
		if i%3 == 0 {
			second = event.Cancelled
		}
		msgs = append(msgs, orderMsg(t, aid, i, event.Reserved, 0), orderMsg(t, aid, i, second, 1))
	}
	rng := rand.New(rand.NewSource(11))
	rng.Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
	for i := range len(msgs) / 5 { // a fifth delivered twice
		msgs = append(msgs, msgs[rng.Intn(len(msgs))])
		_ = i
	}
	send(t, brokers, msgs)
	s, err := New(testConfig(t, brokers, db.DSN))
	if err != nil {
		t.Fatal(err)
	}
	start(t, s)
	cancelled := (orders + 2) / 3 // i % 3 == 0
	waitFor(t, "every order in its final state", 60*time.Second, func() bool {
		return countOrders(t, db, "paid") == orders-cancelled && countOrders(t, db, "cancelled") == cancelled
	})
	if got := readInventory(t, db); got != (inventory{int64(cancelled), 0, int64(orders - cancelled)}) {
		t.Fatalf("inventory %+v", got)
	}
	w := &s.Svc.Writer.Stats
	perTx := float64(w.Events.Load()) / float64(max(w.Batches.Load(), 1))
	if w.DeadLetters.Load() != 0 {
		t.Fatalf("%d dead letters", w.DeadLetters.Load())
	}
	if perTx < 100 {
		t.Fatalf("%.1f events per transaction: not batching", perTx)
	}
	t.Logf("%d messages, %d transactions, %.1f events/tx, %d repeats skipped", len(msgs), w.Batches.Load(), perTx,
		w.Duplicates.Load())
}

// A reservation that arrives before the cancel that freed its unit waits (parked) without
// stalling anything else, and is applied, not dead-lettered, once the cancel arrives.
func TestParkedEventWaitsWithoutStallingThePipeline(t *testing.T) {
	brokers := testenv.Kafka(t, 4)
	db := testenv.MySQL(t)
	seed(t, db, 1)
	const other, otherOrders = aid + 1, 2000
	if _, err := db.DB.Exec("INSERT INTO `activity` (`id`, `sku_id`, `name`, `total`, `start_time`, `end_time`) "+
		"VALUES (?, 1, 'other', ?, 0, 1)", other, otherOrders); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DB.Exec("INSERT INTO `inventory` (`activity_id`, `available`) VALUES (?, ?)", other,
		otherOrders); err != nil {
		t.Fatal(err)
	}
	c := testConfig(t, brokers, db.DSN)
	c.Writer.PoisonAfter = 20 * time.Second
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	start(t, s)
	// A holds the only unit; B's reservation cannot be applied until A is cancelled.
	send(t, brokers, []kafkax.Message{orderMsg(t, aid, 1, event.Reserved, 0)})
	waitFor(t, "A reserved", 20*time.Second, func() bool { return countOrders(t, db, "reserved") == 1 })
	send(t, brokers, []kafkax.Message{orderMsg(t, aid, 2, event.Reserved, 0)})
	waitFor(t, "B parked", 20*time.Second, func() bool {
		return s.Svc.Writer.Stats.Events.Load() >= 1 &&
			s.Svc.Writer.Stats.Parked.Load() >= 1
	})
	// Meanwhile the rest of the pipeline flows: another activity's events are all applied.
	var msgs []kafkax.Message
	for i := range otherOrders {
		msgs = append(msgs, orderMsg(t, other, i, event.Reserved, 0))
	}
	send(t, brokers, msgs)
	waitFor(t, "the other activity's events, while B is parked", 15*time.Second, func() bool {
		return countOrders(t, db, "reserved") == 1+otherOrders
	})
	if s.Svc.Writer.Stats.Parked.Load() < 1 {
		t.Fatal("B is no longer parked: the test did not test the wait")
	}
	send(t, brokers, []kafkax.Message{orderMsg(t, aid, 1, event.Cancelled, 1)})
	waitFor(t, "B applied once A's cancel arrived", 15*time.Second, func() bool {
		return countOrders(t, db, "cancelled") == 1 && countOrders(t, db, "reserved") == 1+otherOrders &&
			s.Svc.Writer.Stats.Parked.Load() == 0
	})
	if n := s.Svc.Writer.Stats.DeadLetters.Load(); n != 0 {
		t.Fatalf("%d dead letters", n)
	}
}
