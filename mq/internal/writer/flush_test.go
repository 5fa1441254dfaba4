package writer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/zeromicro/go-zero/core/conf"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
)

// A poison event (underflow, and a malformed message) is dead-lettered with its reason;
// the events around it are applied.
func TestWriterDeadLettersPoisonAndContinues(t *testing.T) {
	db := newDB(t, 5)
	dlq := &recorder{}
	w := New(testConf(t, func(c *Conf) { c.PoisonAfter = 300 * time.Millisecond }), NewConn(db.DSN), dlq)
	run(t, w)
	var values []string
	var want int
	for i := range 20 {
		ono := fmt.Sprintf("%d-17000000000%02dabcdef01", testAID, i)
		switch {
		case i < 4: // 4 of the 5 units
			values = append(values, marshal(t, orderEvent(event.Reserved, ono, 1)))
			want++
		case i == 10:
			values = append(values, marshal(t, orderEvent(event.Reserved, ono, 10))) // more than exists
		case i == 11:
			values = append(values, `{"event_id": "x", "type": `) // not JSON
		default:
			values = append(values, marshal(t, orderEvent(event.Cancelled, ono, 1))) // no stock effect
			want++
		}
	}
	consumeAll(t, w, values, 8)
	letters := dlq.letters(t)
	if len(letters) != 2 {
		t.Fatalf("%d dead letters, want 2: %+v", len(letters), letters)
	}
	kinds := map[string]bool{}
	for _, d := range letters {
		kinds[d.Reason[:7]] = true
		if d.Source != kafkax.SourceWriter || d.Payload == "" {
			t.Fatalf("dead letter %+v", d)
		}
	}
	if !kinds["rejecte"] || !kinds["malform"] {
		t.Fatalf("dead letters %+v: want one rejected (underflow), one malformed", letters)
	}
	if got := len(readOrders(t, db)); got != want {
		t.Fatalf("%d orders in MySQL, want %d", got, want)
	}
	if got := readInventory(t, db, testAID); got != (inventory{1, 4, 0}) {
		t.Fatalf("inventory %+v, want {1 4 0}", got)
	}
}

// An underflow caused only by arrival order (the cancel that frees the unit arrives after
// the reservation that takes it) is not poison: the event waits and is applied.
func TestWriterWaitsForPrecedingEventInsteadOfDeadLettering(t *testing.T) {
	db := newDB(t, 1)
	dlq := &recorder{}
	w := New(testConf(t, func(c *Conf) { c.PoisonAfter = time.Minute }), NewConn(db.DSN), dlq)
	run(t, w)
	a := fmt.Sprintf("%d-1700000000000aaaaaaaa", testAID)
	b := fmt.Sprintf("%d-1700000000000bbbbbbbb", testAID)
	if err := w.Apply(orderEvent(event.Reserved, a, 1)); err != nil {
		t.Fatal(err)
	}
	// Redis: a cancelled, then b reserved the freed unit. The writer gets b first.
	done := make(chan error, 1)
	go func() { done <- w.Consume(context.Background(), "", marshal(t, orderEvent(event.Reserved, b, 1))) }()
	waitParked(t)
	select {
	case err := <-done:
		t.Fatalf("the reservation returned (%v) before the unit it takes was freed", err)
	default:
	}
	if err := w.Consume(context.Background(), "", marshal(t, orderEvent(event.Cancelled, a, 1))); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(dlq.letters(t)) != 0 {
		t.Fatal("an order-caused underflow was dead-lettered")
	}
	if got := readInventory(t, db, testAID); got != (inventory{0, 1, 0}) {
		t.Fatalf("inventory %+v, want {0 1 0}", got)
	}
}

// waitParked waits until the writer holds a parked event (metric gauge).
func waitParked(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for gaugeValue(t) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no event parked")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func shuffle[T any](r *rand.Rand, s []T) {
	r.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
}

// gaugeValue reads the parked-events gauge from the default Prometheus registry.
func gaugeValue(t *testing.T) float64 {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "seckill_writer_parked_events" {
			for _, m := range mf.GetMetric() {
				return m.GetGauge().GetValue()
			}
		}
	}
	return 0
}

// testConf is the writer's configuration with go-zero's defaults, then set.
func testConf(t testing.TB, set func(*Conf)) Conf {
	t.Helper()
	var c Conf
	if err := conf.FillDefault(&c); err != nil {
		t.Fatal(err)
	}
	if set != nil {
		set(&c)
	}
	return c
}

// A reservation whose freeing cancel is delayed longer than PoisonAfter (Awaited says it
// can still arrive) stays parked, never dead-lettered, and applies once the cancel comes.
func TestWriterKeepsAwaitedEventParkedPastPoisonAfter(t *testing.T) {
	db := newDB(t, 1)
	dlq := &recorder{}
	w := New(testConf(t, func(c *Conf) { c.PoisonAfter = 100 * time.Millisecond }), NewConn(db.DSN), dlq)
	var asked atomic.Int64
	w.Awaited = func(context.Context, event.Event) (bool, error) { asked.Add(1); return true, nil }
	run(t, w)
	a := fmt.Sprintf("%d-1700000000000aaaaaaaa", testAID)
	b := fmt.Sprintf("%d-1700000000000bbbbbbbb", testAID)
	if err := w.Apply(orderEvent(event.Reserved, a, 1)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Consume(context.Background(), "", marshal(t, orderEvent(event.Reserved, b, 1))) }()
	deadline := time.Now().Add(20 * time.Second)
	for asked.Load() < 3 { // asked every second once past PoisonAfter: well past it
		select {
		case err := <-done:
			t.Fatalf("the reservation returned (%v, %d dead letters) while the cancel it waits for could still arrive",
				err, len(dlq.letters(t)))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("Awaited asked %d times", asked.Load())
		}
	}
	if n := len(dlq.letters(t)); n != 0 {
		t.Fatalf("%d dead letters while the awaited event could still arrive", n)
	}
	if err := w.Consume(context.Background(), "", marshal(t, orderEvent(event.Cancelled, a, 1))); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := len(dlq.letters(t)); n != 0 {
		t.Fatalf("%d dead letters", n)
	}
	if got := readInventory(t, db, testAID); got != (inventory{0, 1, 0}) {
		t.Fatalf("inventory %+v, want {0 1 0}", got)
	}
}

// A check that fails keeps the event parked as well; one that says nothing can arrive
// lets it be dead-lettered after PoisonAfter.
func TestWriterDeadLettersOnlyOnceNothingIsAwaited(t *testing.T) {
	db := newDB(t, 1)
	dlq := &recorder{}
	w := New(testConf(t, func(c *Conf) { c.PoisonAfter = 100 * time.Millisecond }), NewConn(db.DSN), dlq)
	var asked atomic.Int64
	w.Awaited = func(context.Context, event.Event) (bool, error) {
		if asked.Add(1) <= 2 {
			return true, errors.New("redis away")
		}
		return false, nil
	}
	run(t, w)
	ono := fmt.Sprintf("%d-1700000000000cccccccc", testAID)
	if err := w.Consume(context.Background(), "", marshal(t, orderEvent(event.Reserved, ono, 10))); err != nil {
		t.Fatal(err)
	}
	if n := asked.Load(); n != 3 {
		t.Fatalf("dead-lettered after %d checks, want 3 (two failed, one clear)", n)
	}
	letters := dlq.letters(t)
	if len(letters) != 1 || letters[0].Reason[:8] != "rejected" {
		t.Fatalf("dead letters %+v, want one rejected", letters)
	}
}

// The flusher asks Awaited at most checksPerRound times a round, and each event at most
// every awaitEvery: a crowd of parked events cannot stall it on round trips.
func TestWriterBoundsAwaitedChecksPerRound(t *testing.T) {
	w := New(testConf(t, nil), nil, &recorder{})
	var asked int
	w.Awaited = func(context.Context, event.Event) (bool, error) { asked++; return true, nil }
	reqs := make([]*request, 3*checksPerRound)
	for i := range reqs {
		reqs[i] = &request{ev: orderEvent(event.Reserved, fmt.Sprint(i), 1)}
	}
	round := func() {
		w.checks = checksPerRound
		for _, r := range reqs {
			if w.nothingAwaited(r) {
				t.Fatal("dead-lettered while awaited")
			}
		}
	}
	for n := 1; n <= 3; n++ {
		round()
		if asked != n*checksPerRound {
			t.Fatalf("round %d: %d checks, want %d", n, asked, n*checksPerRound)
		}
	}
	round() // every event was asked within awaitEvery
	if asked != 3*checksPerRound {
		t.Fatalf("%d checks, want %d: an event was asked twice within %v", asked, 3*checksPerRound, awaitEvery)
	}
}
