package mqserver

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
)

// forgedCount is seckill_writer_dead_letters_total{kind="forged"}.
func forgedCount(t testing.TB) float64 {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "seckill_writer_dead_letters_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" && l.GetValue() == "forged" {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// TestForgedEventsGoToDeadLetterTopic: with EventKey set, events produced straight to the
// topic without the right HMAC (unsigned, signed with another key, altered after signing)
// are dead-lettered and change nothing in MySQL; the signed ones are applied.
func TestForgedEventsGoToDeadLetterTopic(t *testing.T) {
	brokers := testenv.Kafka(t, 4)
	db := testenv.MySQL(t)
	seed(t, db, 100)
	key, other := testenv.RandomSecret(), testenv.RandomSecret()
	signer, wrong := kafkax.NewSigner(key), kafkax.NewSigner(other)

	// A forged reservation of 7 units and a forged stock adjustment of +1000.
	forge := func(id string, e event.Event) kafkax.Message {
		e.EventID, e.ActivityID, e.AtMs = id, aid, 1700000000000
		v, _ := e.Marshal()
		return kafkax.Message{Key: []byte(e.Key()), Value: v}
	}
	reserve := event.Event{Type: event.Reserved, SkuID: 1, OrderNo: fmt.Sprintf("%d-1800000000000ffffffff", aid),
		UID: 9, Quantity: 7, RequestID: "forged", CreatedMs: 1700000000000, ExpireMs: 1700000900000}
	unsigned := forge("1800000000000-0", reserve)
	otherKey := wrong.Sign(forge("1800000000001-0", event.Event{Type: event.Adjusted, Delta: 1000}))
	altered := signer.Sign(forge("1800000000002-0", event.Event{Type: event.Adjusted, Delta: 1}))
	altered.Value = []byte(strings.Replace(string(altered.Value), `"delta":1`, `"delta":1000`, 1))
	if !strings.Contains(string(altered.Value), `"delta":1000`) {
		t.Fatalf("the altered event was not altered: %s", altered.Value)
	}

	const orders = 20
	var msgs []kafkax.Message
	for _, m := range orderEvents(orders) {
		msgs = append(msgs, signer.Sign(m))
	}
	send(t, brokers, append(msgs, unsigned, otherKey, altered))

	before := forgedCount(t)
	c := testConfig(t, brokers, db.DSN)
	c.EventKey = key
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	start(t, s)
	waitFor(t, "the signed events", 60*time.Second, func() bool { return countOrders(t, db, "paid") == orders })
	waitFor(t, "three dead letters", 30*time.Second, func() bool { return s.Svc.Writer.Stats.DeadLetters.Load() == 3 })

	payloads := map[string]bool{}
	for _, d := range deadLetters(t, brokers, 3) {
		if !strings.HasPrefix(d.Reason, "forged") {
			t.Errorf("dead letter %+v, want reason forged", d)
		}
		payloads[d.Payload] = true
	}
	for _, m := range []kafkax.Message{unsigned, otherKey, altered} {
		if !payloads[string(m.Value)] {
			t.Errorf("forged event %s not on the dead-letter topic untouched", m.Value)
		}
	}
	if inv := readInventory(t, db); inv != (inventory{Available: 100 - orders, Sold: orders}) {
		t.Fatalf("inventory %+v after the forged events, want available %d sold %d", inv, 100-orders, orders)
	}
	if n := countOrders(t, db, "reserved"); n != 0 {
		t.Fatalf("the forged reservation was applied (%d reserved rows)", n)
	}
	if got := forgedCount(t) - before; got != 3 {
		t.Fatalf("forged dead letters counted %v, want 3", got)
	}
}
