package relay_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	red "github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/relay"
)

// A relay that read entries and died before Kafka took them: another relay reclaims them.
func TestRelayReclaimsDeadRelaysEntries(t *testing.T) {
	e := newEnv(t)
	orders := e.reserve(150, 1)
	c := e.conf()
	f := failing{calls: make(chan struct{}, 1)}
	dead, err := relay.NewWithSenders(c, e.store, time.Hour, f, f)
	if err != nil {
		t.Fatal(err)
	}
	stopDead := e.start(dead)
	<-f.calls // it has read a batch and cannot produce it
	stopDead()
	pending, err := e.raw.XPending(context.Background(), e.keys.Events(aid), relay.Group).Result()
	if err != nil {
		t.Fatal(err)
	}
	if pending.Count == 0 || pending.Consumers[dead.Consumer()] == 0 {
		t.Fatalf("the dead relay holds no pending entries: %+v", pending)
	}

	topic := collect(t, e.brokers, event.Topic)
	c.ClaimIdle = 200 * time.Millisecond
	live := e.newRelay(c)
	e.start(live)
	want := expected(orders, event.Reserved)
	waitFor(t, "every event, the dead relay's included", func() bool {
		return len(missing(want, topic.events(t))) == 0
	})
	waitFor(t, "an empty outbox", func() bool { return e.outboxLen() == 0 })
}

// The relay waits AckWait only for an entry an Acker may produce: the expiry job's
// releases (type expired) are acknowledged to nobody, and a burst of them is relayed at
// once, packed or not. Here AckWait is an hour: waiting for them would never deliver them in
// the test.
func TestRelayDoesNotHoldExpiries(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	key := e.keys.Events(aid)
	orders := e.reserve(50, 1)
	if err := e.raw.Del(ctx, key).Err(); err != nil { // keep only the expiries below
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	for i, o := range orders {
		// half packed, half the way entries were written before they were packed
		values := []any{"t", "expired", "aid", aid, "sku", 70, "ono", o, "uid", 1 + i, "qty", 1, "at", now,
			"rid", fmt.Sprintf("req-%08d", 1+i), "cms", now - 1000, "ems", now, "ep", 0}
		if i%2 == 0 {
			p, err := event.Event{Type: event.Expired, ActivityID: aid, SkuID: 70, OrderNo: o, UID: int64(1 + i),
				Quantity: 1, AtMs: now, RequestID: fmt.Sprintf("req-%08d", 1+i), CreatedMs: now - 1000,
				ExpireMs: now}.Pack(0, "")
			if err != nil {
				t.Fatal(err)
			}
			values = []any{event.FieldEntry, p}
		}
		if err := e.raw.XAdd(ctx, &red.XAddArgs{Stream: key, Values: values}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	topic := collect(t, e.brokers, event.Topic)
	c := e.conf()
	c.AckWait = time.Hour
	e.start(e.newRelay(c))
	want := expected(orders, event.Expired)
	waitFor(t, "every expiry on Kafka", func() bool { return len(missing(want, topic.events(t))) == 0 })
}
