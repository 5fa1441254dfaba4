package consumer

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/zeromicro/go-queue/kq"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
)

// holder applies every message at once but the ones whose value ends in suffix (if set): it keeps
// their done until release (a slow transaction).
type holder struct {
	suffix string
	mu     sync.Mutex
	held   []func(error)
}

func (h *holder) Submit(_ context.Context, _, value string, done func(error)) {
	if h.suffix == "" || !strings.HasSuffix(value, h.suffix) {
		done(nil)
		return
	}
	h.mu.Lock()
	h.held = append(h.held, done)
	h.mu.Unlock()
}

func (h *holder) Reject(_, _, _ string, done func(error)) { done(nil) }

func (h *holder) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, done := range h.held {
		done(nil)
	}
	h.held = nil
}

// produce writes the values "<partition>-<i>" for i in [from, to) to the partition.
func produce(t *testing.T, brokers []string, partition, from, to int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := kafka.DialLeader(ctx, "tcp", brokers[0], event.Topic, partition)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	var msgs []kafka.Message
	for i := from; i < to; i++ {
		msgs = append(msgs, kafka.Message{Value: fmt.Appendf(nil, "%d-%d", partition, i)})
	}
	if _, err := conn.WriteMessages(msgs...); err != nil {
		t.Fatal(err)
	}
}

// waitCommitted waits until ok holds of the group's committed offsets of partitions 0 and 1
// for hold without a break, and fails the test after 20 s.
func waitCommitted(t *testing.T, p *kafkax.Progress, hold time.Duration, ok func(kafkax.Offsets) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var since time.Time
	var got kafkax.Offsets
	for time.Now().Before(deadline) {
		var err error
		got, err = p.Committed(context.Background(), []int{0, 1})
		switch {
		case err != nil || !ok(got):
			since = time.Time{}
		case since.IsZero():
			since = time.Now()
		case time.Since(since) >= hold:
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("committed %v", got)
}

func startGroup(t *testing.T, kc kq.KqConf, h Handler) {
	t.Helper()
	c := Conf{MaxInFlight: 64, MaxWait: 50 * time.Millisecond, SessionTimeout: 6 * time.Second,
		HeartbeatInterval: 100 * time.Millisecond}
	g, err := New(kc, c, h)
	if err != nil {
		t.Fatal(err)
	}
	go g.Start()
	t.Cleanup(g.Stop)
}

// A member commits a partition only in the generation it fetched the messages in: one that
// lost the partition in a rebalance, its transaction still running, does not move the
// group's offset back under the new owner's once the transaction ends (after a broker
// restart, the members rejoining one by one did so, and the group's lag never ended).
func TestNoCommitOnceTheGenerationEnded(t *testing.T) {
	brokers := testenv.Kafka(t, 2)
	kc := kq.KqConf{Brokers: brokers, Group: "commitlag", Topic: event.Topic, Conns: 1, Offset: "first"}
	p := kafkax.NewProgress(brokers, event.Topic, kc.Group)
	for part := range 2 {
		produce(t, brokers, part, 0, 5)
	}
	slow := &holder{suffix: "-4"} // offset 4 of each partition stays in its transaction
	startGroup(t, kc, slow)
	waitCommitted(t, p, 0, func(o kafkax.Offsets) bool { return o[0] == 4 && o[1] == 4 })

	startGroup(t, kc, &holder{}) // a second member: the partitions are shared out again
	// The second member applies offset 4 of the partition it took; then more messages.
	waitCommitted(t, p, 0, func(o kafkax.Offsets) bool { return o[0] == 5 || o[1] == 5 })
	for part := range 2 {
		produce(t, brokers, part, 5, 10)
	}
	// The new member's partition reaches the end; the first member's other stays at 4.
	waitCommitted(t, p, 0, func(o kafkax.Offsets) bool { return o[0] == 10 || o[1] == 10 })
	slow.release() // the first generation's transactions end
	waitCommitted(t, p, time.Second, func(o kafkax.Offsets) bool { return o[0] == 10 && o[1] == 10 })
}
