package relay_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/relay"
)

// keyFailing refuses every message whose key starts with prefix while blocked is set, and
// passes the rest to the real producer.
type keyFailing struct {
	next    kafkax.Sender
	prefix  []byte
	blocked atomic.Bool
}

func (f *keyFailing) Send(ctx context.Context, msgs ...kafkax.Message) error {
	if f.blocked.Load() {
		for _, m := range msgs {
			if bytes.HasPrefix(m.Key, f.prefix) {
				return errors.New("kafka refuses this activity's messages")
			}
		}
	}
	return f.next.Send(ctx, msgs...)
}

// One activity whose delivery keeps keyFailing (retrying with backoff) never delays another
// activity's relay.
func TestRetryingActivityDoesNotDelayOthers(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const other = aid + 1
	now := time.Now().Unix()
	if _, _, err := e.store.Warmup(ctx, domain.Activity{ActivityID: other, SkuID: 71, Name: "other",
		Counters: domain.Counters{Total: 1000, Remaining: 1000}, Start: now - 60, End: now + 3600, Limit: 10,
		PayTimeout: 900, ExpireAt: now + 7200}); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Activate(ctx, other, now+3600); err != nil {
		t.Fatal(err)
	}
	c := e.conf()
	p, err := kafkax.NewProducer(kafkax.Conf{Brokers: e.brokers, Topic: event.Topic, BatchSize: 100,
		BatchTimeout: time.Millisecond, WriteTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	f := &keyFailing{next: p, prefix: fmt.Appendf(nil, "%d-", aid)}
	f.blocked.Store(true)
	r, err := relay.NewWithSenders(c, e.store, time.Hour, f, p)
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, e.brokers, event.Topic)
	e.start(r)
	stuck := e.reserve(20, 1)
	time.Sleep(300 * time.Millisecond) // the stuck activity is retrying now
	var fine []string
	for i := range 20 {
		res, err := stocktest.Reserve(ctx, e.store, other, int64(100+i), 1, fmt.Sprintf("other-%04d", i))
		if err != nil {
			t.Fatal(err)
		}
		fine = append(fine, res.OrderNo)
	}
	sent := time.Now()
	want := expected(fine, event.Reserved)
	deadline := time.Now().Add(3 * time.Second)
	for len(missing(want, got.events(t))) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the other activity's events are still missing %v after its reservations, while one activity retries: %v",
				time.Since(sent), missing(want, got.events(t)))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("the other activity's 20 events arrived %v after its reservations", time.Since(sent))
	if len(missing(expected(stuck, event.Reserved), got.events(t))) != len(stuck) {
		t.Fatal("the keyFailing activity's events went through: the test did not test the retry")
	}
	f.blocked.Store(false)
	waitFor(t, "the retried activity's events", func() bool {
		return len(missing(expected(stuck, event.Reserved), got.events(t))) == 0
	})
}
