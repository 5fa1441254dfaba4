package relay_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	red "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zeromicro/go-zero/core/conf"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/relay"
	"github.com/seckill/seckill/internal/stock"
)

const aid = 7

// env is one test's Redis (fresh prefix), warm activity and kfake broker.
type env struct {
	t       *testing.T
	rds     *redis.Redis
	raw     *red.Client // for stream commands go-zero does not wrap
	store   *stock.Store
	keys    stock.Keys // the test's key naming, to inspect Redis directly
	brokers []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	rds, keys := testenv.Redis(t)
	store := stock.NewStore(rds, keys, stock.WithEntries()) // for the tests that acknowledge (acked)
	ctx := context.Background()
	if err := store.LoadScripts(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	m := domain.Activity{ActivityID: aid, SkuID: 70, Name: "relay",
		Counters: domain.Counters{Total: 100000, Remaining: 100000},
		Start:    now - 60, End: now + 3600, Limit: 10, PayTimeout: 900, ExpireAt: now + 7200}
	if _, _, err := store.Warmup(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := store.Activate(ctx, aid, m.End); err != nil {
		t.Fatal(err)
	}
	raw := red.NewClient(&red.Options{Addr: testenv.RedisAddr()})
	t.Cleanup(func() { _ = raw.Close() })
	return &env{t: t, rds: rds, raw: raw, store: store, keys: keys, brokers: testenv.Kafka(t, 4)}
}

// conf is the configuration's defaults (as go-zero's loader fills them), sped up for tests.
func (e *env) conf() relay.Conf {
	var c relay.Conf
	if err := conf.FillDefault(&c); err != nil {
		e.t.Fatal(err)
	}
	c.Brokers, c.Topic, c.DeadLetterTopic = e.brokers, event.Topic, event.DeadLetterTopic
	c.BatchSize, c.Block, c.ClaimIdle = 100, 20*time.Millisecond, time.Minute
	c.ClaimInterval, c.RefreshInterval, c.BatchTimeout = 50*time.Millisecond, 50*time.Millisecond, time.Millisecond
	return c
}

// start runs a relay until the test ends (or stop is called).
func (e *env) start(r *relay.Relay) (stop func()) {
	done := make(chan struct{})
	go func() { defer close(done); r.Start() }()
	var once sync.Once
	stop = func() { once.Do(func() { r.Stop(); <-done }) }
	e.t.Cleanup(stop)
	return stop
}

func (e *env) newRelay(c relay.Conf) *relay.Relay {
	r, err := relay.New(c, e.store, time.Hour)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// reserve makes n reservations for distinct users and returns their order numbers.
func (e *env) reserve(n, firstUID int) []string {
	e.t.Helper()
	out := make([]string, n)
	for i := range out {
		res, err := stocktest.Reserve(context.Background(), e.store, aid, int64(firstUID+i), 1,
			fmt.Sprintf("req-%08d", firstUID+i))
		if err != nil {
			e.t.Fatalf("reserve: %v", err)
		}
		out[i] = res.OrderNo
	}
	return out
}

func (e *env) outboxLen() int64 {
	n, err := e.raw.XLen(context.Background(), e.keys.Events(aid)).Result()
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// collector reads a topic from the start in the background.
type collector struct {
	mu      sync.Mutex
	records []*kgo.Record
	cl      *kgo.Client
}

func collect(t *testing.T, brokers []string, topic string) *collector {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{cl: cl}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			c.mu.Lock()
			fs.EachRecord(func(r *kgo.Record) { c.records = append(c.records, r) })
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); <-done; cl.Close() })
	return c
}

// events decodes what arrived so far: count per (order_no, type).
func (c *collector) events(t *testing.T) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for _, r := range c.records {
		ev, err := event.Unmarshal(r.Value)
		if err != nil {
			t.Fatalf("bad event on the topic: %v: %s", err, r.Value)
		}
		if string(r.Key) != ev.Key() {
			t.Fatalf("record key %q, event key %q", r.Key, ev.Key())
		}
		out[ev.OrderNo+"/"+string(ev.Type)]++
	}
	return out
}

func (c *collector) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.records)
}

// waitFor polls cond until it holds or the deadline passes (a liveness bound, not a
// speed assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func expected(orders []string, typ event.Type) map[string]bool {
	m := map[string]bool{}
	for _, o := range orders {
		m[o+"/"+string(typ)] = true
	}
	return m
}

// missing lists expected keys not yet seen.
func missing(want map[string]bool, got map[string]int) []string {
	var out []string
	for k := range want {
		if got[k] == 0 {
			out = append(out, k)
		}
	}
	return out
}

func TestRelayDeliversEveryEvent(t *testing.T) {
	e := newEnv(t)
	orders := e.reserve(300, 1)
	paid := orders[:100]
	for i, o := range paid {
		if _, err := e.store.Confirm(context.Background(), o, int64(1+i)); err != nil { // orders[i] is uid 1+i's
			t.Fatal(err)
		}
	}
	want := expected(orders, event.Reserved)
	for k := range expected(paid, event.Paid) {
		want[k] = true
	}
	topic := collect(t, e.brokers, event.Topic)
	e.start(e.newRelay(e.conf()))
	waitFor(t, "every event on Kafka", func() bool { return len(missing(want, topic.events(t))) == 0 })
	waitFor(t, "an empty outbox", func() bool { return e.outboxLen() == 0 })
	got := topic.events(t)
	if len(got) != len(want) {
		t.Fatalf("%d distinct events on Kafka, want %d", len(got), len(want))
	}
	for k, n := range got {
		if !want[k] {
			t.Fatalf("unexpected event %s", k)
		}
		if n != 1 { // no crash in this test: exactly once
			t.Fatalf("event %s delivered %d times", k, n)
		}
	}
}

// A relay stopped mid-stream and a new one started: every event still arrives.
func TestRelayStoppedMidStreamAndRestarted(t *testing.T) {
	e := newEnv(t)
	topic := collect(t, e.brokers, event.Topic)
	stopA := e.start(e.newRelay(e.conf()))

	const n = 1000
	var orders []string
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		orders = e.reserve(n, 1)
	}()
	waitFor(t, "the first relay to move some events", func() bool { return topic.len() >= 100 })
	stopA()
	<-produced
	if e.outboxLen() == 0 {
		t.Fatal("the first relay drained everything before it was stopped: the test proves nothing")
	}
	c := e.conf()
	c.ClaimIdle = 100 * time.Millisecond // whatever A read and did not finish
	e.start(e.newRelay(c))
	want := expected(orders, event.Reserved)
	waitFor(t, "every event after the restart", func() bool { return len(missing(want, topic.events(t))) == 0 })
	waitFor(t, "an empty outbox", func() bool { return e.outboxLen() == 0 })
}

// failing is a Kafka that never acknowledges.
type failing struct{ calls chan struct{} }

func (f failing) Send(context.Context, ...kafkax.Message) error {
	select {
	case f.calls <- struct{}{}:
	default:
	}
	return errors.New("broker down")
}

func TestRelayRetiresOnlyDrainedActivitiesPastGrace(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	keys := e.keys
	longAgo := time.Now().Add(-3 * time.Hour).Unix() // grace is one hour
	const drained, undrained = 8, 9
	for _, id := range []int64{drained, undrained} {
		if err := e.store.Activate(ctx, id, longAgo); err != nil {
			t.Fatal(err)
		}
	}
	// An old activity with an event still in its outbox must be relayed before it goes.
	if _, err := e.rds.XAddCtx(ctx, keys.Events(undrained), false, "*", []string{
		event.FieldType, "adjusted", event.FieldActivity, "9", event.FieldDelta, "5", event.FieldAt, "1"}); err != nil {
		t.Fatal(err)
	}
	topic := collect(t, e.brokers, event.Topic)
	e.start(e.newRelay(e.conf()))
	waitFor(t, "old activities retired", func() bool {
		ids, err := e.store.Active(ctx, 0, math.MaxInt64)
		if err != nil {
			t.Fatal(err)
		}
		return len(ids) == 1
	})
	ids, _ := e.store.Active(ctx, 0, math.MaxInt64)
	if _, ok := ids[aid]; !ok {
		t.Fatalf("active set %v, want only the current activity %d", ids, aid)
	}
	// Retired means its outbox was empty, so the event was in Kafka (acks=all) before; the
	// consumer of this test may still be on its way to it.
	waitFor(t, "the undrained activity's event relayed before it retired", func() bool {
		return topic.events(t)["/adjusted"] == 1
	})
	// The relay drops the stream right after it leaves the active set (retire: deactivate,
	// check the stream once more, drop it), so the test may see the set first.
	waitFor(t, "the retired activity's outbox stream dropped", func() bool {
		n, _ := e.rds.Exists(keys.Events(undrained))
		return !n
	})
}
