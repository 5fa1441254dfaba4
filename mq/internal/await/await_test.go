package await_test

import (
	"context"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/zeromicro/go-zero/core/conf"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/mq/internal/await"
)

const aid = 7

// Against real Redis and Kafka (kfake): an event is awaited while an older change of its
// activity is in the outbox (ids compared as numbers), then until the group has consumed
// what was on the topic when the outbox had nothing older, through this process's handed
// position or the group's commits; an empty (or deleted) outbox with everything consumed
// awaits nothing.
func TestAwaitedFollowsTheOutboxAndTheGroup(t *testing.T) {
	ctx := context.Background()
	rds, keys := testenv.Redis(t)
	brokers := testenv.Kafka(t, 2)
	group := testenv.RandomName("g-")
	progress := kafkax.NewProgress(brokers, event.Topic, group)
	handed := map[int]int64{}
	check := await.New(stock.NewStore(rds, keys).Outbox(), progress, func() map[int]int64 { return handed })
	ev := event.Event{EventID: "1700000000000-9", ActivityID: aid}
	awaited := func(want bool, why string) {
		t.Helper()
		got, err := check.Awaited(ctx, ev)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("%s: Awaited %v, want %v", why, got, want)
		}
	}
	xadd := func(id string) {
		t.Helper()
		if _, err := rds.EvalCtx(ctx, `return redis.call('XADD', KEYS[1], ARGV[1], 'f', 'v')`,
			[]string{keys.Events(aid)}, id); err != nil {
			t.Fatal(err)
		}
	}

	xadd("1700000000000-8") // the change ev waits for, not yet relayed
	xadd("1700000000000-10")
	awaited(true, "an older change in the outbox")

	// The relay produces it, then deletes it; a later change stays (10 > 9 as numbers).
	p := newProducer(t, brokers)
	if err := p.Send(ctx, kafkax.Message{Key: []byte("k"), Value: []byte("cancel")}); err != nil {
		t.Fatal(err)
	}
	if _, err := rds.EvalCtx(ctx, `return redis.call('XDEL', KEYS[1], ARGV[1])`,
		[]string{keys.Events(aid)}, "1700000000000-8"); err != nil {
		t.Fatal(err)
	}
	awaited(true, "outbox clear, but the produced change not consumed")

	ends, err := progress.Ends(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var at int
	for part, end := range ends {
		if end > 0 {
			at = part
		}
	}
	handed[at] = ends[at] - 1
	awaited(true, "handed short of the end")
	handed[at] = ends[at]
	awaited(false, "handed to this writer up to the end")

	// Another event: the group's commits count as well (another member consumed it).
	ev = event.Event{EventID: "1700000000000-9", ActivityID: aid + 1}
	delete(handed, at)
	awaited(true, "nothing handed, nothing committed")
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: event.Topic, GroupID: group,
		StartOffset: kafka.FirstOffset, MaxWait: 50 * time.Millisecond})
	defer r.Close()
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	m, err := r.FetchMessage(rctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CommitMessages(rctx, m); err != nil {
		t.Fatal(err)
	}
	awaited(false, "committed by the group up to the end")
}

// newProducer is a producer to event.Topic, closed when the test ends.
func newProducer(t *testing.T, brokers []string) *kafkax.Producer {
	t.Helper()
	var dc kafkax.Conf
	if err := conf.FillDefault(&dc); err != nil {
		t.Fatal(err)
	}
	dc.Brokers, dc.Topic, dc.BatchTimeout = brokers, event.Topic, time.Millisecond
	p, err := kafkax.NewProducer(dc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}
