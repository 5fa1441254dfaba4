package writer

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	red "github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/stock"
)

// A shuffled stream of 5,000 deliveries (every event of 1,000 real orders at least once,
// the rest random repeats) leaves MySQL holding exactly what Redis holds.
func TestWriterShuffledDuplicatedStreamMatchesRedis(t *testing.T) {
	ctx := context.Background()
	rds, keys := testenv.Redis(t)
	store := stock.NewStore(rds, keys)
	if err := store.LoadScripts(ctx); err != nil {
		t.Fatal(err)
	}
	const total = 900
	now := time.Now().Unix()
	if _, _, err := store.Warmup(ctx, domain.Activity{ActivityID: testAID, SkuID: 1, Name: "s",
		Counters: domain.Counters{Total: total, Remaining: total}, Start: now - 10, End: now + 600, Limit: 5, PayTimeout: 2,
		ExpireAt: now + 1200}); err != nil {
		t.Fatal(err)
	}
	reserve := func(from, to int) []string { return reserveUIDs(t, store, from, to) }
	// Sell out, then free units (cancel, expire) and sell them again: the stream then holds
	// reservations that are valid only after the releases before them.
	orders := reserve(1, 901)
	for i, o := range orders[:350] { // orders[i] is uid i+1's
		if _, err := store.Confirm(ctx, o, int64(i+1)); err != nil {
			t.Fatalf("pay: %v", err)
		}
	}
	for i, o := range orders[350:600] {
		if _, err := store.Release(ctx, o, int64(351+i), domain.StateCancelled); err != nil {
			t.Fatalf("cancel: %v", err)
		}
	}
	time.Sleep(2100 * time.Millisecond)
	expired, err := store.ExpireDue(ctx, testAID, 1000)
	if err != nil || len(expired) != 300 {
		t.Fatalf("expired %d orders (%v), want 300", len(expired), err)
	}
	orders = append(orders, reserve(901, 1001)...)
	for _, d := range []int64{-30, 20} {
		if _, _, err := store.Adjust(ctx, testAID, d, "", ""); err != nil {
			t.Fatal(err)
		}
	}

	values := outboxValues(t, keys)
	if len(values) != 900+350+250+300+100+2 {
		t.Fatalf("%d events in the outbox", len(values))
	}
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	distinct := len(values)
	for len(values) < 5000 {
		values = append(values, values[rng.IntN(distinct)])
	}
	shuffle(rng, values)

	db := newDB(t, total)
	dlq := &recorder{}
	w := New(testConf(t, func(c *Conf) { c.PoisonAfter = time.Minute }), NewConn(db.DSN), dlq)
	run(t, w)
	consumeAll(t, w, values, 64)

	if n := len(dlq.letters(t)); n != 0 {
		t.Fatalf("%d events dead-lettered", n)
	}
	st, err := store.Stock(ctx, testAID)
	if err != nil {
		t.Fatal(err)
	}
	want := inventory{st.Remaining, st.Locked, st.Sold}
	if got := readInventory(t, db, testAID); got != want {
		t.Fatalf("MySQL inventory %+v, Redis %+v", got, want)
	}
	if got := readTotal(t, db); got != st.Total {
		t.Fatalf("MySQL total %d, Redis %d", got, st.Total)
	}
	checkOrdersMatch(t, store, db, orders)
	// An event arriving after a later one of its order (paid before reserved) changes
	// nothing, so applied <= distinct; every delivery is either applied or skipped.
	if a, d := w.Stats.Applied.Load(), w.Stats.Duplicates.Load(); a > int64(distinct) || a+d != 5000 {
		t.Fatalf("%d applied + %d skipped: want at most %d applied and 5000 in all", a, d, distinct)
	}
	t.Logf("5000 deliveries: %d applied, %d duplicates skipped, %d transactions",
		w.Stats.Applied.Load(), w.Stats.Duplicates.Load(), w.Stats.Batches.Load())
}

// reserveUIDs reserves a unit of activity testAID for each of the buyers from..to-1 and
// returns the order numbers.
func reserveUIDs(t *testing.T, store *stock.Store, from, to int) []string {
	t.Helper()
	var out []string
	for uid := from; uid < to; uid++ {
		r, err := stocktest.Reserve(context.Background(), store, testAID, int64(uid), 1, fmt.Sprintf("request-%06d", uid))
		if err != nil {
			t.Fatalf("reserve %d: %v", uid, err)
		}
		out = append(out, r.OrderNo)
	}
	return out
}

// outboxValues is the outbox of activity testAID, each entry as the event's JSON.
func outboxValues(t *testing.T, keys stock.Keys) []string {
	t.Helper()
	ctx := context.Background()
	raw := red.NewClient(&red.Options{Addr: testenv.RedisAddr()})
	defer raw.Close()
	entries, err := raw.XRange(ctx, keys.Events(testAID), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var values []string
	for _, e := range entries {
		evs, err := event.FromEntry(e.ID, e.Values) // a reservation batch's entry holds several
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			values = append(values, marshal(t, ev))
		}
	}
	return values
}

// checkOrdersMatch checks that MySQL holds the orders Redis holds, in the same states.
func checkOrdersMatch(t *testing.T, store *stock.Store, db *testenv.Database, orders []string) {
	t.Helper()
	ctx := context.Background()
	mysqlOrders := readOrders(t, db)
	if len(mysqlOrders) != len(orders) {
		t.Fatalf("%d orders in MySQL, %d in Redis", len(mysqlOrders), len(orders))
	}
	for _, ono := range orders {
		o, err := store.Order(ctx, ono)
		if err != nil {
			t.Fatal(err)
		}
		if mysqlOrders[ono] != o.State {
			t.Fatalf("order %s: MySQL %q, Redis %q", ono, mysqlOrders[ono], o.State)
		}
	}
}

// proxy is a TCP proxy to MySQL that can be cut: every connection dropped, new ones
// refused, until restored. It is how "MySQL unavailable" is made without touching the
// shared server.
type proxy struct {
	ln     net.Listener
	target string
	down   atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	go p.serve()
	t.Cleanup(func() { _ = ln.Close(); p.cut() })
	return p
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.down.Load() {
			_ = c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(s, c); _ = s.Close() }()
		go func() { _, _ = io.Copy(c, s); _ = c.Close() }()
	}
}

func (p *proxy) cut() {
	p.down.Store(true)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

func (p *proxy) restore() { p.down.Store(false) }

// MySQL unavailable for a few seconds mid-stream: the writer waits and retries, no handler
// returns while its event is not committed, and nothing is lost.
func TestWriterWaitsOutMySQLOutage(t *testing.T) {
	db := newDB(t, 100000)
	cfg, err := mysql.ParseDSN(db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, cfg.Addr)
	cfg.Addr = p.ln.Addr().String()
	cfg.Timeout = time.Second
	w := New(testConf(t, func(c *Conf) { c.RetryMax = 500 * time.Millisecond }), NewConn(cfg.FormatDSN()), &recorder{})
	run(t, w)

	const orders = 1000
	var values []string
	for i := range orders {
		ono := fmt.Sprintf("%d-1700000000000%08x", testAID, i)
		values = append(values, marshal(t, orderEvent(event.Reserved, ono, 1)),
			marshal(t, orderEvent(event.Paid, ono, 1)))
	}
	var cutAt, restoredAt atomic.Int64
	var early atomic.Int64 // handlers that returned while MySQL was unreachable
	work := make(chan string)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for v := range work {
				if err := w.Consume(context.Background(), "", v); err != nil {
					t.Errorf("consume: %v", err)
				}
				now := time.Now().UnixNano()
				// grace for a commit that completed just as the link was cut
				if c := cutAt.Load(); c != 0 && now > c+int64(200*time.Millisecond) && restoredAt.Load() == 0 {
					early.Add(1)
				}
			}
		}()
	}
	go func() {
		for w.Stats.Events.Load() < 300 {
			time.Sleep(time.Millisecond)
		}
		p.cut()
		cutAt.Store(time.Now().UnixNano())
		time.Sleep(3 * time.Second)
		restoredAt.Store(time.Now().UnixNano())
		p.restore()
	}()
	for _, v := range values {
		work <- v
	}
	close(work)
	wg.Wait()
	if cutAt.Load() == 0 {
		t.Fatal("the outage never happened")
	}
	if restoredAt.Load() == 0 {
		t.Fatal("every handler returned while MySQL was cut off")
	}
	if n := early.Load(); n != 0 {
		t.Fatalf("%d handlers returned while MySQL was unreachable", n)
	}
	if w.Stats.Retries.Load() == 0 {
		t.Fatal("no transaction was retried: the outage hit nothing")
	}
	if got := readInventory(t, db, testAID); got != (inventory{100000 - orders, 0, orders}) {
		t.Fatalf("inventory %+v after the outage", got)
	}
	st := readOrders(t, db)
	for ono, s := range st {
		if s != domain.StatePaid {
			t.Fatalf("order %s is %q", ono, s)
		}
	}
	if len(st) != orders {
		t.Fatalf("%d orders, want %d", len(st), orders)
	}
	t.Logf("outage: %d retries", w.Stats.Retries.Load())
}
