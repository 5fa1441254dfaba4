package relay_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/relay"
	"github.com/seckill/seckill/internal/xerr"
)

// kafka is a topic that keeps what it acknowledged; fail makes it refuse, and during
// runs inside Send (before the acknowledgement) as a fault injected mid-call.
type kafka struct {
	mu     sync.Mutex
	events []event.Event
	fail   bool
	during func()
}

func (k *kafka) Send(_ context.Context, msgs ...kafkax.Message) error {
	k.mu.Lock()
	fail, during := k.fail, k.during
	k.mu.Unlock()
	if during != nil {
		during()
	}
	if fail {
		return errors.New("broker down")
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, m := range msgs {
		ev, err := event.Unmarshal(m.Value)
		if err != nil {
			return err
		}
		k.events = append(k.events, ev)
	}
	return nil
}

func (k *kafka) set(fail bool, during func()) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.fail, k.during = fail, during
}

func (k *kafka) got() []event.Event {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]event.Event(nil), k.events...)
}

// outbox reads the activity's outbox entries as events, by entry id (and "/<index>" after it for
// each event of a batch entry of several).
func (e *env) outbox() map[string]event.Event {
	e.t.Helper()
	msgs, err := e.raw.XRange(context.Background(), e.keys.Events(aid), "-", "+").Result()
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]event.Event{}
	for _, m := range msgs {
		evs, err := event.FromEntry(m.ID, m.Values)
		if err != nil {
			e.t.Fatal(err)
		}
		for j, ev := range evs {
			if len(evs) == 1 {
				out[m.ID] = ev
			} else {
				out[fmt.Sprintf("%s/%d", m.ID, j)] = ev
			}
		}
	}
	return out
}

func busy(err error) bool { return xerr.CodeOf(err) == xerr.Busy }

// Every change a caller is answered for is in Kafka, as the relay would produce it from
// the outbox, before the answer, and then no longer in the outbox (the relay need not
// produce it again); a repeat that changes nothing produces nothing.
func TestAckerAnswersOnceTheEventIsInKafka(t *testing.T) {
	e := newEnv(t)
	k := &kafka{}
	b := acked{e.store, relay.NewAcker(k, e.store)}
	ctx := context.Background()
	outbox := map[string]event.Event{} // every entry the outbox held while one was sent
	k.during = func() {
		for id, ev := range e.outbox() {
			outbox[id] = ev
		}
	}
	r, err := b.Reserve(ctx, aid, 1, 1, "request-a")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Confirm(ctx, r.OrderNo, 1); err != nil {
		t.Fatal(err)
	}
	if err := b.Confirm(ctx, r.OrderNo, 1); err != nil { // already paid
		t.Fatal(err)
	}
	r2, err := b.Reserve(ctx, aid, 2, 1, "request-b")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, r2.OrderNo, 2, domain.StateCancelled); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Adjust(ctx, aid, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Reserve(ctx, aid, 1, 1, "request-a"); err != nil { // a replay
		t.Fatal(err)
	}
	got, left := k.got(), e.outbox()
	if len(got) != 5 || len(outbox) != 5 || len(left) != 0 {
		t.Fatalf("%d events in Kafka, %d were in the outbox, %d are left; "+
			"want 5, 5 and 0 (reserve, pay, reserve, cancel, adjust)", len(got), len(outbox), len(left))
	}
	for i, typ := range []event.Type{event.Reserved, event.Paid, event.Reserved, event.Cancelled, event.Adjusted} {
		if got[i].Type != typ || got[i] != outbox[got[i].EventID] {
			t.Fatalf("event %d in Kafka %+v, want the %s outbox entry %+v", i, got[i], typ, outbox[got[i].EventID])
		}
	}
}

// Kafka refusing: the caller gets BUSY, the change stays made with its outbox entry (the
// relay delivers it), and the retry with the same request id answers it as a replay.
func TestAckerKafkaDownAnswersBusyAndTheRetryReplays(t *testing.T) {
	e := newEnv(t)
	k := &kafka{}
	b := acked{e.store, relay.NewAcker(k, e.store)}
	ctx := context.Background()
	k.set(true, nil)
	if _, err := b.Reserve(ctx, aid, 1, 1, "request-a"); !busy(err) {
		t.Fatalf("reserve with Kafka down: %v, want BUSY", err)
	}
	if n := len(e.outbox()); n != 1 {
		t.Fatalf("%d outbox entries, want 1 (the relay's to deliver)", n)
	}
	k.set(false, nil)
	r, err := b.Reserve(ctx, aid, 1, 1, "request-a")
	if err != nil || !r.Replay {
		t.Fatalf("retry: %+v %v, want a replay", r, err)
	}
	snap, err := e.store.Stock(ctx, aid)
	if err != nil || snap.Locked != 1 {
		t.Fatalf("stock %+v %v, want one unit locked", snap, err)
	}
}

// The book replaced while the event was on its way (Redis emptied and rebuilt: the stock
// hash gone, or back with another epoch): BUSY, never an acknowledgement.
func TestAckerBookReplacedAnswersBusy(t *testing.T) {
	e := newEnv(t)
	k := &kafka{}
	b := acked{e.store, relay.NewAcker(k, e.store)}
	ctx := context.Background()
	stockKey := e.keys.Stock(aid)
	for name, fault := range map[string]func(){
		"rebuilt with the next epoch": func() { e.raw.HSet(ctx, stockKey, "epoch", 1) },
		"emptied":                     func() { e.raw.Del(ctx, stockKey) },
	} {
		t.Run(name, func(t *testing.T) {
			k.set(false, func() { fault(); k.set(false, nil) })
			if _, err := b.Reserve(ctx, aid, 7, 1, "request-"+map[string]string{"rebuilt with the next epoch": "next",
				"emptied": "empty"}[name]); !busy(err) {
				t.Fatalf("%v, want BUSY", err)
			}
		})
	}
}

// Many buyers at once: each acknowledged reservation's event was in Kafka when it was
// acknowledged, exactly once per acknowledgement.
func TestAckerConcurrentBuyers(t *testing.T) {
	e := newEnv(t)
	k := &kafka{}
	b := acked{e.store, relay.NewAcker(k, e.store)}
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[string]bool{}
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				uid := int64(g*1000 + i + 1)
				r, err := b.Reserve(context.Background(), aid, uid, 1, fmt.Sprintf("request-%d", uid))
				if err != nil {
					t.Error(err)
					return
				}
				in := false
				for _, ev := range k.got() {
					in = in || ev.OrderNo == r.OrderNo
				}
				if !in {
					t.Errorf("order %s acknowledged before its event was in Kafka", r.OrderNo)
				}
				mu.Lock()
				acked[r.OrderNo] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if got := k.got(); len(got) != 400 || len(acked) != 400 {
		t.Fatalf("%d events in Kafka for %d acknowledged orders, want 400 and 400", len(got), len(acked))
	}
}

// With the Acker producing through the relay's producer, each acknowledged change reaches
// the topic once: the relay skips what an Acker produced and deleted. A change whose
// Acker failed (answered BUSY) is still delivered, by the relay.
func TestAcknowledgedEntriesProducedOnce(t *testing.T) {
	e := newEnv(t)
	topic := collect(t, e.brokers, event.Topic)
	ctx := context.Background()
	b := acked{e.store, relay.NewAcker(&kafka{fail: true}, e.store)}
	if res, err := b.Reserve(ctx, aid, 999, 1, "request-failed"); !busy(err) {
		t.Fatalf("reserve with the Acker's Kafka down: %+v %v, want BUSY", res, err)
	}
	var unacked string // the BUSY reservation's entry: in the outbox, for the relay
	for _, ev := range e.outbox() {
		unacked = ev.OrderNo
	}
	if unacked == "" {
		t.Fatal("the BUSY reservation's entry is not in the outbox")
	}
	c := e.conf()
	c.AckWait = time.Second // an Acker slower than that may be produced twice (allowed); not here
	r := e.newRelay(c)
	e.start(r)
	want := expected([]string{unacked}, event.Reserved)
	waitFor(t, "the relay delivering the BUSY reservation", func() bool {
		return len(missing(want,
			topic.events(t))) == 0
	})

	b = acked{e.store, r.Acker()} // the relay is running, reading the outbox as it fills
	var wg sync.WaitGroup
	var mu sync.Mutex
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				uid := int64(g*100 + i + 1)
				res, err := b.Reserve(ctx, aid, uid, 1, fmt.Sprintf("request-%d", uid))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				want[res.OrderNo+"/"+string(event.Reserved)] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	waitFor(t, "every reservation on Kafka", func() bool { return len(missing(want, topic.events(t))) == 0 })
	waitFor(t, "an empty outbox, nothing pending", func() bool {
		p, err := e.raw.XPending(ctx, e.keys.Events(aid), relay.Group).Result()
		return e.outboxLen() == 0 && err == nil && p.Count == 0
	})
	got := topic.events(t)
	if len(got) != len(want) || len(want) != 201 {
		t.Fatalf("%d distinct events on Kafka, want %d (201)", len(got), len(want))
	}
	for k, n := range got {
		if !want[k] || n != 1 {
			t.Fatalf("event %s on Kafka %d times (expected: %v), want once", k, n, want[k])
		}
	}
}

// A change first answered BUSY because Kafka was down is answered on its retry (a replay,
// "already paid", "already cancelled") only once its event is in Kafka: a retry while
// Kafka is still down is BUSY again, and the retry after answers with the event in Kafka
// and out of the outbox. Before, the retry was answered from Redis alone, and a paid order
// whose reservation was such a replay could be lost with Redis (its pay acknowledged, its
// reserved event never in Kafka).
func TestAckerRetriedChangeWaitsForKafka(t *testing.T) {
	e := newEnv(t)
	k := &kafka{}
	b := acked{e.store, relay.NewAcker(k, e.store)}
	ctx := context.Background()
	inKafka := func(orderNo string, typ event.Type) bool {
		for _, ev := range k.got() {
			if ev.OrderNo == orderNo && ev.Type == typ {
				return true
			}
		}
		return false
	}
	steps := []struct {
		name string
		typ  event.Type
		call func(orderNo string) (string, error)
	}{
		{"reserve", event.Reserved, func(string) (string, error) {
			r, err := b.Reserve(ctx, aid, 1, 1, "request-a")
			return r.OrderNo, err
		}},
		{"pay", event.Paid, func(o string) (string, error) { return o, b.Confirm(ctx, o, 1) }},
		{"reserve to cancel", event.Reserved, func(string) (string, error) {
			r, err := b.Reserve(ctx, aid, 2, 1, "request-b")
			return r.OrderNo, err
		}},
		{"cancel", event.Cancelled, func(o string) (string, error) {
			return o, b.Release(ctx, o, 2, domain.StateCancelled)
		}},
	}
	var orderNo string
	for _, st := range steps {
		k.set(true, nil)
		if _, err := st.call(orderNo); !busy(err) {
			t.Fatalf("%s with Kafka down: %v, want BUSY", st.name, err)
		}
		if _, err := st.call(orderNo); !busy(err) {
			t.Fatalf("%s retried with Kafka still down: %v, want BUSY (answered from Redis alone)", st.name, err)
		}
		k.set(false, nil)
		o, err := st.call(orderNo)
		if err != nil {
			t.Fatalf("%s retried with Kafka back: %v", st.name, err)
		}
		if !inKafka(o, st.typ) {
			t.Fatalf("%s of %s answered, its %s event not in Kafka", st.name, o, st.typ)
		}
		for _, ev := range e.outbox() {
			if ev.OrderNo == o && ev.Type == st.typ {
				t.Fatalf("%s: its %s entry still in the outbox after it was produced", st.name, st.typ)
			}
		}
		n := len(k.got())
		if _, err := st.call(orderNo); err != nil || len(k.got()) != n {
			t.Fatalf("%s repeated once its event is in Kafka: %v, %d events produced, want none", st.name, err, len(k.got())-n)
		}
		orderNo = o
	}
}

// barrierKafka acknowledges sends in groups of n at once, as kafka-go returns the calls
// whose messages shared a batch.
type barrierKafka struct {
	kafka
	n       int
	mu      sync.Mutex
	waiting []chan struct{}
}

func (b *barrierKafka) Send(ctx context.Context, msgs ...kafkax.Message) error {
	if err := b.kafka.Send(ctx, msgs...); err != nil {
		return err
	}
	ch := make(chan struct{})
	b.mu.Lock()
	b.waiting = append(b.waiting, ch)
	if len(b.waiting) == b.n {
		for _, w := range b.waiting {
			close(w)
		}
		b.waiting = nil
	}
	b.mu.Unlock()
	<-ch
	return nil
}

// The epoch checks of acknowledgements that Kafka returned together share Redis calls:
// 64 concurrent buyers whose sends return in groups of 16 make far fewer checks than
// acknowledgements, and each acknowledgement is still checked (its entry deleted).
func TestAckerBatchesChecks(t *testing.T) {
	e := newEnv(t)
	k := &barrierKafka{n: 16}
	b := acked{e.store, relay.NewAcker(k, e.store)}
	checks0, entries0 := relay.AckChecks()
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			uid := int64(g + 1)
			if _, err := b.Reserve(context.Background(), aid, uid, 1, fmt.Sprintf("request-%d", uid)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	checks, entries := relay.AckChecks()
	checks, entries = checks-checks0, entries-entries0
	if entries != 64 || checks > 32 {
		t.Fatalf("%d checks for %.0f acknowledgements, want 64 acknowledgements in at most 32 checks", checks, entries)
	}
	if n := len(e.outbox()); n != 0 {
		t.Fatalf("%d entries left in the outbox, want 0", n)
	}
	t.Logf("64 acknowledgements in %d checks", checks)
}

// The Acker's record of what it acknowledged of an activity is dropped once the activity
// ended and the relay retired it; before, it stayed for the life of the process.
func TestAckerForgetsRetiredActivities(t *testing.T) {
	e := newEnv(t)
	r := e.newRelay(e.conf())
	b := acked{e.store, r.Acker()}
	e.start(r)
	if _, err := b.Reserve(context.Background(), aid, 1, 1, "request-a"); err != nil {
		t.Fatal(err)
	}
	if n := r.Acker().Tallies(); n != 1 {
		t.Fatalf("the Acker holds records of %d activities, want 1", n)
	}
	// The activity ended long ago (grace is one hour): drained, the relay retires it.
	if err := e.store.Activate(context.Background(), aid, time.Now().Add(-3*time.Hour).Unix()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the retired activity's record dropped", func() bool { return r.Acker().Tallies() == 0 })
	if ids, err := e.store.Active(context.Background(), 0, math.MaxInt64); err != nil || len(ids) != 0 {
		t.Fatalf("active set %v (%v), want empty", ids, err)
	}
}
