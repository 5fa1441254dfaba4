package relay_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
)

// An unparsable outbox entry goes to the dead-letter topic, keyed by its stream; the entries
// behind it flow. One is written the way entries were before they were packed, one packed with
// a token that is not key=value (read leniently, it would be a valid adjustment).
func TestRelayDeadLettersUnparsableEntry(t *testing.T) {
	e := newEnv(t)
	before := e.reserve(10, 1)
	key := e.keys.Events(aid)
	badID, err := e.rds.XAddCtx(context.Background(), key, true, "*",
		[]string{event.FieldType, "exploded", event.FieldActivity, "7"})
	if err != nil {
		t.Fatal(err)
	}
	badPacked, err := e.rds.XAddCtx(context.Background(), key, true, "*",
		[]string{event.FieldEntry, fmt.Sprintf("t=adjusted aid=%d d=5 at=1 x", aid)})
	if err != nil {
		t.Fatal(err)
	}
	after := e.reserve(10, 100)
	dlq := collect(t, e.brokers, event.DeadLetterTopic)
	topic := collect(t, e.brokers, event.Topic)
	e.start(e.newRelay(e.conf()))
	want := expected(append(before, after...), event.Reserved)
	waitFor(t, "the valid events", func() bool { return len(missing(want, topic.events(t))) == 0 })
	waitFor(t, "the dead letters", func() bool { return dlq.len() == 2 })
	waitFor(t, "an empty outbox", func() bool { return e.outboxLen() == 0 })
	if n := topic.events(t)["/adjusted"]; n != 0 {
		t.Fatalf("%d adjustments on the topic, want none", n)
	}
	dlq.mu.Lock()
	defer dlq.mu.Unlock()
	for i, id := range []string{badID, badPacked} {
		d, err := kafkax.ParseDeadLetter(dlq.records[i].Value)
		if err != nil {
			t.Fatal(err)
		}
		// Keyed by the stream it came from (the relay names it by the store's keys).
		if d.Source != kafkax.SourceOutbox || d.EntryID != id || d.Reason == "" || d.Key != key ||
			string(dlq.records[i].Key) != key {
			t.Fatalf("dead letter %+v (record key %q), want source outbox, entry %s, a reason and key %s", d,
				dlq.records[i].Key, id, key)
		}
	}
}
