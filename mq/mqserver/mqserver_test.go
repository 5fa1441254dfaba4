package mqserver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zeromicro/go-zero/core/conf"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/relay"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/mq/internal/consumer"
)

const aid = 3

func testConfig(t testing.TB, brokers []string, dsn string) Config {
	t.Helper()
	var c Config
	if err := conf.FillDefault(&c); err != nil {
		t.Fatal(err)
	}
	c.Name = "mq-test"
	c.Mode = "test"
	c.DevServer.Enabled, c.Consumer.DevServer.Enabled = false, false // no HTTP server in tests
	c.Log.Mode, c.Log.Encoding, c.Log.Level = "console", "plain", "error"
	c.Consumer.Name = "mq-test-writer"
	c.Consumer.Brokers = brokers
	c.Consumer.Group = testenv.RandomName("writer-")
	c.Consumer.Topic = event.Topic
	c.DeadLetter.Topic = event.DeadLetterTopic
	c.Consumer.Offset = "first"
	c.Consumer.MinBytes = 1
	c.Consumer.Conns = 4
	c.Mysql.DataSource = dsn
	return c
}

// producerConf is a producer to the events topic, with go-zero's defaults.
func producerConf(t testing.TB, brokers []string) kafkax.Conf {
	t.Helper()
	var c kafkax.Conf
	if err := conf.FillDefault(&c); err != nil {
		t.Fatal(err)
	}
	c.Brokers, c.Topic = brokers, event.Topic
	return c
}

func seed(t testing.TB, db *testenv.Database, available int64) {
	t.Helper()
	if _, err := db.DB.Exec("INSERT INTO `activity` (`id`, `sku_id`, `name`, `total`, `start_time`, `end_time`) "+
		"VALUES (?, 1, 'mq', ?, 0, 1)", aid, available); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DB.Exec("INSERT INTO `inventory` (`activity_id`, `available`) VALUES (?, ?)", aid,
		available); err != nil {
		t.Fatal(err)
	}
}

type inventory struct{ Available, Locked, Sold int64 }

func readInventory(t testing.TB, db *testenv.Database) inventory {
	var inv inventory
	if err := db.DB.QueryRow("SELECT `available`, `locked`, `sold` FROM `inventory` WHERE `activity_id` = ?", aid).
		Scan(&inv.Available, &inv.Locked, &inv.Sold); err != nil {
		t.Fatal(err)
	}
	return inv
}

func countOrders(t testing.TB, db *testenv.Database, status string) int {
	var n int
	if err := db.DB.QueryRow("SELECT COUNT(*) FROM `seckill_order` WHERE `status` = ?", status).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func start(t testing.TB, s *Server) (stop func()) {
	done := make(chan struct{})
	go func() { defer close(done); s.Start() }()
	var once sync.Once
	stop = func() { once.Do(func() { s.Stop(); <-done }) }
	t.Cleanup(stop)
	return stop
}

func waitFor(t testing.TB, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// publish produces reserved+paid for n orders (in that order, same key).
func publish(t testing.TB, brokers []string, n int, extra ...kafkax.Message) {
	t.Helper()
	send(t, brokers, append(orderEvents(n), extra...))
}

// orderEvents are reserved+paid for n orders (in that order, same key).
func orderEvents(n int) []kafkax.Message {
	var msgs []kafkax.Message
	for i := range n {
		ono := fmt.Sprintf("%d-1700000000000%08x", aid, i)
		for j, typ := range []event.Type{event.Reserved, event.Paid} {
			ev := event.Event{EventID: fmt.Sprintf("1700000000%03d-%d", i, j), Type: typ, ActivityID: aid, SkuID: 1,
				OrderNo: ono, UID: int64(i + 1), Quantity: 1, AtMs: 1700000000000, RequestID: "r" + ono,
				CreatedMs: 1700000000000, ExpireMs: 1700000900000}
			v, _ := ev.Marshal()
			msgs = append(msgs, kafkax.Message{Key: []byte(ev.Key()), Value: v})
		}
	}
	return msgs
}

// crashAfter lets the handler's transaction commit, then "kills" the consumer before it
// can commit the offset: the k-th durable message is never reported done until the
// process is dead, so nothing at or after it in its partition is committed.
type crashAfter struct {
	h       consumer.Handler
	k       int64
	n       atomic.Int64
	crashed chan struct{}
	dead    <-chan struct{} // closed once the process is "dead" (writer stopped, reader closed)
}

func (c *crashAfter) Reject(key, value, why string, done func(error)) {
	c.h.Reject(key, value, why, done)
}

func (c *crashAfter) Submit(ctx context.Context, key, value string, done func(error)) {
	c.h.Submit(ctx, key, value, func(err error) {
		if err == nil && c.n.Add(1) == c.k {
			close(c.crashed)
			go func() {
				<-c.dead // reported only after the reader is closed: its offset cannot be committed
				done(errors.New("crashed before the offset commit"))
			}()
			return
		}
		done(err)
	})
}

func TestConsumerKilledBeforeOffsetCommitAppliesNothingTwice(t *testing.T) {
	brokers := testenv.Kafka(t, 4)
	db := testenv.MySQL(t)
	seed(t, db, 10000)
	const orders = 500
	publish(t, brokers, orders)
	c := testConfig(t, brokers, db.DSN)

	crash := &crashAfter{k: 300, crashed: make(chan struct{})}
	first, err := newServer(c, func(h consumer.Handler) consumer.Handler { crash.h = h; return crash })
	if err != nil {
		t.Fatal(err)
	}
	crash.dead = first.Svc.Writer.Stopped()
	stopFirst := start(t, first)
	select {
	case <-crash.crashed:
	case <-time.After(30 * time.Second):
		t.Fatal("the consumer never reached the crash point")
	}
	stopFirst() // the process dies: the reader is closed with the crashed offset uncommitted
	appliedBefore := first.Svc.Writer.Stats.Applied.Load()

	second, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	start(t, second)
	waitFor(t, "every order paid", 60*time.Second, func() bool { return countOrders(t, db, "paid") == orders })
	// The batches of the first run may have applied everything before it died; what was
	// not committed comes again and is skipped as repeated (a wait that times out here
	// means the crash point was committed after all).
	waitFor(t, "the uncommitted events to come again", 30*time.Second, func() bool {
		return second.Svc.Writer.Stats.Duplicates.Load() > 0
	})
	if got := readInventory(t, db); got != (inventory{10000 - orders, 0, orders}) {
		t.Fatalf("inventory %+v: an event was applied twice or not at all", got)
	}
	if second.Svc.Writer.Stats.Duplicates.Load() == 0 {
		t.Fatal("the restarted consumer saw no repeated event: the crash point was committed after all")
	}
	t.Logf("before the crash %d applied; after: %d applied, %d repeats skipped", appliedBefore,
		second.Svc.Writer.Stats.Applied.Load(), second.Svc.Writer.Stats.Duplicates.Load())
}

func TestPoisonGoesToDeadLetterTopicAndTheRestIsApplied(t *testing.T) {
	brokers := testenv.Kafka(t, 4)
	db := testenv.MySQL(t)
	seed(t, db, 100)
	poison := event.Event{EventID: "1800000000000-0", Type: event.Reserved, ActivityID: aid, SkuID: 1,
		OrderNo: fmt.Sprintf("%d-1800000000000ffffffff", aid), UID: 9, Quantity: 1000, AtMs: 1}
	pv, _ := poison.Marshal()
	const orders = 50
	publish(t, brokers, orders,
		kafkax.Message{Key: []byte(poison.OrderNo), Value: pv},
		kafkax.Message{Key: []byte("junk"), Value: []byte("{not json")})
	// and more valid events behind the poison
	more, err := kafkax.NewProducer(producerConf(t, brokers))
	if err != nil {
		t.Fatal(err)
	}
	defer more.Close()
	late := event.Event{EventID: "1900000000000-0", Type: event.Adjusted, ActivityID: aid, Delta: 10, AtMs: 1}
	lv, _ := late.Marshal()
	if err := more.Send(context.Background(), kafkax.Message{Key: []byte(late.Key()), Value: lv}); err != nil {
		t.Fatal(err)
	}

	c := testConfig(t, brokers, db.DSN)
	c.Writer.PoisonAfter = 300 * time.Millisecond
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	start(t, s)
	waitFor(t, "the valid events", 60*time.Second, func() bool {
		return countOrders(t, db, "paid") == orders && readInventory(t, db).Available == 100-orders+10
	})
	waitFor(t, "two dead letters counted", 30*time.Second,
		func() bool { return s.Svc.Writer.Stats.DeadLetters.Load() == 2 })

	letters := deadLetters(t, brokers, 2)
	if len(letters) != 2 {
		t.Fatalf("%d dead letters on the topic, want 2", len(letters))
	}
	for _, d := range letters {
		if d.Reason == "" || d.Payload == "" {
			t.Fatalf("dead letter without reason or payload: %+v", d)
		}
		if d.Key == poison.OrderNo && d.Payload != string(pv) {
			t.Fatalf("poison payload altered: %q", d.Payload)
		}
	}
	if n := countOrders(t, db, "reserved"); n != 0 {
		t.Fatalf("the poison reservation was applied (%d reserved rows)", n)
	}
}

// deadLetters reads up to n dead letters from the start of the dead-letter topic (20 s at most).
func deadLetters(t testing.TB, brokers []string, n int) []kafkax.DeadLetter {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(event.DeadLetterTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var letters []kafkax.DeadLetter
	for len(letters) < n && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			d, err := kafkax.ParseDeadLetter(r.Value)
			if err != nil {
				t.Errorf("dead letter: %v", err)
			}
			letters = append(letters, d)
		})
	}
	return letters
}

// End to end: 10,000 reservations through the real Lua store, the relay, Kafka (kfake)
// and the writer. Once drained, MySQL's inventory and orders equal Redis's.
func TestEndToEnd10000Reservations(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	ctx := context.Background()
	rds, keys := testenv.Redis(t)
	store := stock.NewStore(rds, keys)
	if err := store.LoadScripts(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 10000
	now := time.Now().Unix()
	m := domain.Activity{ActivityID: aid, SkuID: 1, Name: "e2e", Counters: domain.Counters{Total: n, Remaining: n},
		Start: now - 10, End: now + 3600, Limit: 1, PayTimeout: 900, ExpireAt: now + 7200}
	if _, _, err := store.Warmup(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := store.Activate(ctx, aid, m.End); err != nil {
		t.Fatal(err)
	}
	brokers := testenv.Kafka(t, 8)
	db := testenv.MySQL(t)
	seed(t, db, n)

	rl := testRelay(t, brokers, store)
	c := testConfig(t, brokers, db.DSN)
	c.Consumer.Conns = 8
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	s.Add(rl) // relay and writer in one group here; in production the relay runs in the rpc
	start(t, s)

	const workers = 32
	begin := time.Now()
	startCh := make(chan struct{})
	var wg sync.WaitGroup
	var failed atomic.Int64
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-startCh
			for uid := w + 1; uid <= n; uid += workers {
				if _, err := stocktest.Reserve(ctx, store, aid, int64(uid), 1, fmt.Sprintf("e2e-req-%06d", uid)); err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	close(startCh)
	wg.Wait()
	reserved := time.Since(begin)
	if failed.Load() != 0 {
		t.Fatalf("%d reservations failed", failed.Load())
	}
	waitFor(t, "MySQL to catch up with Redis", 120*time.Second, func() bool {
		return countOrders(t, db, "reserved") == n
	})
	drained := time.Since(begin)
	st, err := store.Stock(ctx, aid)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := readInventory(t, db), (inventory{st.Remaining, st.Locked, st.Sold}); got != want {
		t.Fatalf("MySQL inventory %+v, Redis %+v", got, want)
	}
	if st.Remaining != 0 || st.Locked != n {
		t.Fatalf("Redis %+v: not every reservation went through", st)
	}
	w := &s.Svc.Writer.Stats
	t.Logf("10000 reservations in %v; MySQL equal to Redis %v after the start (%v after the last reservation); "+
		"%d transactions, %.1f events/tx", reserved, drained, drained-reserved, w.Batches.Load(),
		float64(w.Events.Load())/float64(max(w.Batches.Load(), 1)))
}

// testRelay is a relay of store's outboxes to brokers (grace: an hour).
func testRelay(t *testing.T, brokers []string, store *stock.Store) *relay.Relay {
	t.Helper()
	var rc relay.Conf
	if err := conf.FillDefault(&rc); err != nil {
		t.Fatal(err)
	}
	rc.Enabled, rc.Brokers, rc.Topic, rc.DeadLetterTopic = true, brokers, event.Topic, event.DeadLetterTopic
	rl, err := relay.New(rc, store, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return rl
}
