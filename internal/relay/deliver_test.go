package relay_test

import (
	"context"
	"testing"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
)

// An unparsable outbox entry goes to the dead-letter topic; the entries behind it flow.
func TestRelayDeadLettersUnparsableEntry(t *testing.T) {
	e := newEnv(t)
	before := e.reserve(10, 1)
	key := e.keys.Events(aid)
	badID, err := e.rds.XAddCtx(context.Background(), key, true, "*",
		[]string{event.FieldType, "exploded", event.FieldActivity, "7"})
	if err != nil {
		t.Fatal(err)
	}
	after := e.reserve(10, 100)
	dlq := collect(t, e.brokers, event.DeadLetterTopic)
	topic := collect(t, e.brokers, event.Topic)
	e.start(e.newRelay(e.conf()))
	want := expected(append(before, after...), event.Reserved)
	waitFor(t, "the valid events", func() bool { return len(missing(want, topic.events(t))) == 0 })
	waitFor(t, "the dead letter", func() bool { return dlq.len() == 1 })
	waitFor(t, "an empty outbox", func() bool { return e.outboxLen() == 0 })
	dlq.mu.Lock()
	d, err := kafkax.ParseDeadLetter(dlq.records[0].Value)
	dlq.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if d.Source != kafkax.SourceOutbox || d.EntryID != badID || d.Reason == "" {
		t.Fatalf("dead letter %+v, want source outbox, entry %s and a reason", d, badID)
	}
}
