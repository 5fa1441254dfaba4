package relay_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/relay"
)

// halfFirst is a Kafka whose first Send acknowledges only every other message (kafka-go's
// per-message WriteErrors) and whose later Sends take everything; it keeps what it took.
type halfFirst struct {
	mu    sync.Mutex
	sends []int // messages per Send
	took  []kafkax.Message
}

func (h *halfFirst) Send(_ context.Context, msgs ...kafkax.Message) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sends = append(h.sends, len(msgs))
	if len(h.sends) > 1 {
		h.took = append(h.took, msgs...)
		return nil
	}
	we := make(kafkago.WriteErrors, len(msgs))
	for i, m := range msgs {
		if i%2 == 1 {
			we[i] = errors.New("not the leader")
		} else {
			h.took = append(h.took, m)
		}
	}
	return we
}

func (h *halfFirst) state() ([]int, []kafkax.Message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int(nil), h.sends...), append([]kafkax.Message(nil), h.took...)
}

// A reservation batch's one outbox entry is relayed as one Kafka message per reservation,
// keyed by its order number (so an order's events share a partition, as before), and leaves
// the outbox only once Kafka took every one of them: a produce that Kafka took half of sends
// the whole entry again (the writer is idempotent), and no reservation's event is lost.
func TestRelayProducesABatchEntryPerEvent(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	items := make([]domain.ReserveItem, 16)
	for i := range items {
		items[i] = domain.ReserveItem{UID: int64(500 + i), Qty: 1, RequestID: fmt.Sprintf("batch-entry-%04d", i)}
	}
	res, err := e.store.ReserveBatch(ctx, aid, items, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if n := e.outboxLen(); n != 1 {
		t.Fatalf("%d outbox entries for a batch of 16, want 1", n)
	}
	k := &halfFirst{}
	r, err := relay.NewWithSenders(e.conf(), e.store, time.Hour, k, failing{})
	if err != nil {
		t.Fatal(err)
	}
	e.start(r)
	waitFor(t, "an empty outbox", func() bool { return e.outboxLen() == 0 })
	sends, took := k.state()
	if len(sends) != 2 || sends[0] != 16 || sends[1] != 16 {
		t.Fatalf("sends of %v messages, want the entry's 16 twice (the second after a half-taken one)", sends)
	}
	seen := map[string]int{}
	for _, m := range took {
		ev, err := event.Unmarshal(m.Value)
		if err != nil || string(m.Key) != ev.OrderNo || ev.Type != event.Reserved {
			t.Fatalf("message %q: %+v, %v; want a reserved event keyed by its order", m.Key, ev, err)
		}
		seen[ev.OrderNo]++
	}
	for i, r := range res {
		if r.Err != nil || seen[r.OrderNo] == 0 {
			t.Fatalf("item %d (%+v): its event was never taken by Kafka", i, r)
		}
	}
}
