package mqserver

import (
	"context"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
)

// Through the service (kfake, MariaDB, Redis): a reservation whose freeing cancel is
// still in its activity's outbox (not yet produced) long past PoisonAfter stays parked,
// never dead-lettered, and is applied once the cancel arrives; a truly poison reservation
// (nothing older in the outbox, everything consumed) is dead-lettered after PoisonAfter.
func TestParkedEventAwaitsItsCancelPastPoisonAfter(t *testing.T) {
	ctx := context.Background()
	brokers := testenv.Kafka(t, 3)
	db := testenv.MySQL(t)
	seed(t, db, 1)
	rds, keys := testenv.Redis(t)
	c := testConfig(t, brokers, db.DSN)
	c.Writer.PoisonAfter = 300 * time.Millisecond
	c.Outbox.Redis, c.Outbox.KeyPrefix = testenv.RedisConf(), keys.Prefix
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	start(t, s)
	xadd := func(cmd, id string) {
		t.Helper()
		script := `return redis.call('XADD', KEYS[1], ARGV[1], 'f', 'v')`
		if cmd == "XDEL" {
			script = `return redis.call('XDEL', KEYS[1], ARGV[1])`
		}
		if _, err := rds.EvalCtx(ctx, script, []string{keys.Events(aid)}, id); err != nil {
			t.Fatal(err)
		}
	}
	// A holds the only unit. Redis then cancelled A (1700000000001-1, still in the outbox)
	// and reserved the freed unit for B (1700000000002-0), which Kafka delivers first.
	send(t, brokers, []kafkax.Message{orderMsg(t, aid, 1, event.Reserved, 0)})
	waitFor(t, "A reserved", 20*time.Second, func() bool { return countOrders(t, db, "reserved") == 1 })
	cancelA := orderMsg(t, aid, 1, event.Cancelled, 1)
	xadd("XADD", "1700000000001-1")
	send(t, brokers, []kafkax.Message{orderMsg(t, aid, 2, event.Reserved, 0)})
	waitFor(t, "B parked", 20*time.Second, func() bool { return s.Svc.Writer.Stats.Parked.Load() >= 1 })
	time.Sleep(10 * c.Writer.PoisonAfter) // and the check asked several times
	if n := s.Svc.Writer.Stats.DeadLetters.Load(); n != 0 {
		t.Fatalf("%d dead letters while the cancel B waits for is in the outbox", n)
	}
	// At least once: a rebalance may hand B over again, and each copy waits (seen: 2 parked).
	if n := s.Svc.Writer.Stats.Parked.Load(); n < 1 {
		t.Fatalf("B is no longer parked (%d parked)", n)
	}
	// The relay produces the cancel, then deletes it from the outbox.
	send(t, brokers, []kafkax.Message{cancelA})
	xadd("XDEL", "1700000000001-1")
	waitFor(t, "B applied once A's cancel arrived", 20*time.Second, func() bool {
		return countOrders(t, db, "cancelled") == 1 && countOrders(t, db, "reserved") == 1 &&
			s.Svc.Writer.Stats.Parked.Load() == 0
	})
	if n := s.Svc.Writer.Stats.DeadLetters.Load(); n != 0 {
		t.Fatalf("%d dead letters", n)
	}
	// C: no unit left and nothing can free one: dead-lettered. C holds its partition's
	// commits, so only the position handed to the writer passes it (consumer.Group.Handed).
	send(t, brokers, []kafkax.Message{orderMsg(t, aid, 3, event.Reserved, 0)})
	waitFor(t, "C dead-lettered", 30*time.Second, func() bool { return s.Svc.Writer.Stats.DeadLetters.Load() == 1 })
}
