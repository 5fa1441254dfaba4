package relay_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/relay"
)

// sends counts a sender's calls and the messages of each.
type sends struct {
	kafka
	mu    sync.Mutex
	sizes []int
}

func (s *sends) Send(ctx context.Context, msgs ...kafkax.Message) error {
	s.mu.Lock()
	s.sizes = append(s.sizes, len(msgs))
	s.mu.Unlock()
	return s.kafka.Send(ctx, msgs...)
}

func (s *sends) take() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.sizes
	s.sizes = nil
	return out
}

func batchOf(n, from int) []domain.ReserveItem {
	items := make([]domain.ReserveItem, n)
	for i := range items {
		items[i] = domain.ReserveItem{UID: int64(from + i), Qty: 1, RequestID: fmt.Sprintf("batch-%08d", from+i)}
	}
	return items
}

// A reservation batch is acknowledged per batch: its entries reach Kafka in one produce (a
// duplicate's entry once) and leave the outbox; a failing produce answers every item BUSY,
// the changes staying made, and the batch sent again replays the same orders, produced once more
// in one go.
func TestAckerAcknowledgesABatchInOneProduce(t *testing.T) {
	e := newEnv(t)
	k := &sends{}
	b := acked{e.store, relay.NewAcker(k, e.store)}
	ctx := context.Background()
	items := append(batchOf(40, 1), batchOf(1, 1)...)
	got, err := b.ReserveBatch(ctx, aid, items, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range got {
		if r.Err != nil {
			t.Fatalf("item %d: %v", i, r.Err)
		}
	}
	if sizes := k.take(); len(sizes) != 1 || sizes[0] != 40 {
		t.Fatalf("produces of the batch: %v, want one of 40", sizes)
	}
	if left := e.outbox(); len(left) != 0 {
		t.Fatalf("%d entries left in the outbox", len(left))
	}

	k.set(true, nil)
	items = batchOf(10, 100)
	first, err := b.ReserveBatch(ctx, aid, items, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range first {
		if !busy(r.Err) {
			t.Fatalf("item %d with Kafka down: %+v, want BUSY", i, r)
		}
	}
	if sizes := k.take(); len(sizes) != 1 || sizes[0] != 10 {
		t.Fatalf("produces with Kafka down: %v, want one of 10", sizes)
	}
	if left := e.outbox(); len(left) != 10 {
		t.Fatalf("%d entries in the outbox after the failed produce, want 10", len(left))
	}
	k.set(false, nil)
	again, err := b.ReserveBatch(ctx, aid, items, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	orders := map[string]bool{}
	for i, r := range again {
		if r.Err != nil || !r.Replay || orders[r.OrderNo] {
			t.Fatalf("item %d sent again: %+v", i, r)
		}
		orders[r.OrderNo] = true
	}
	if sizes := k.take(); len(sizes) != 1 || sizes[0] != 10 {
		t.Fatalf("produces of the replayed batch: %v, want one of 10", sizes)
	}
	if left := e.outbox(); len(left) != 0 {
		t.Fatalf("%d entries left in the outbox after the replay", len(left))
	}
	if n := len(k.got()); n != 50 {
		t.Fatalf("%d events in Kafka, want 50", n)
	}
}
