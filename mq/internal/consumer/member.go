package consumer

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/zeromicro/go-zero/core/logx"
)

// member is one member of the group: each generation, a fetch loop and a committer per
// partition assigned to it, which end with the generation. A partition's offsets are
// committed only in the generation its messages were fetched in (the commit carries that
// generation's id): the coordinator refuses it once the group has moved on, so a member
// that lost the partition can never move its committed offset back under the new
// owner's (docs/DESIGN.md, "The writer (mq)").
type member struct {
	gc     kafka.ConsumerGroupConfig // the group membership
	rc     kafka.ReaderConfig        // a partition's reader, but for its Partition
	group  string                    // the consumer group, for traces
	h      Handler
	verify func(kafka.Message) error // nil: every message goes to Submit
	slots  chan struct{}             // in-flight bound, over the member's partitions
	// handed is the group's positions, noted after each Submit returns.
	handed *positions
}

// A failed commit is retried after commitRetryMin, doubling to commitRetryMax.
const (
	commitRetryMin = 100 * time.Millisecond
	commitRetryMax = 2 * time.Second
)

type entry struct {
	msg  kafka.Message
	done chan error // buffered 1
}

func (m *member) run(ctx context.Context) {
	cg, err := kafka.NewConsumerGroup(m.gc)
	if err != nil {
		logx.Errorf("consumer: group %s: %v", m.group, err)
		return
	}
	defer func() {
		// Leaves the group once the generation's loops have returned: no commit after this.
		if err := cg.Close(); err != nil {
			logx.Errorf("consumer: close group: %v", err)
		}
	}()
	for {
		gen, err := cg.Next(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, kafka.ErrGroupClosed) {
				return
			}
			logx.Errorf("consumer: join group %s: %v", m.group, err)
			continue
		}
		for _, a := range gen.Assignments[m.rc.Topic] {
			gen.Start(func(gctx context.Context) {
				pctx, cancel := context.WithCancel(gctx) // the generation's end, or Stop
				defer cancel()
				defer context.AfterFunc(ctx, cancel)()
				m.partition(pctx, gen, a)
			})
		}
	}
}

// partition fetches one assigned partition from the offset the generation starts it at and
// hands its messages to the handler in order, until ctx ends.
func (m *member) partition(ctx context.Context, gen *kafka.Generation, a kafka.PartitionAssignment) {
	rc := m.rc
	rc.Partition = a.ID
	r := kafka.NewReader(rc)
	defer func() {
		if err := r.Close(); err != nil {
			logx.Errorf("consumer: close reader of partition %d: %v", a.ID, err)
		}
	}()
	if err := r.SetOffset(a.Offset); err != nil {
		logx.Errorf("consumer: partition %d offset %d: %v", a.ID, a.Offset, err)
		return
	}
	q := make(chan *entry, cap(m.slots))
	var cwg sync.WaitGroup
	cwg.Add(1)
	go func() { defer cwg.Done(); m.commit(ctx, gen, q) }()
	defer cwg.Wait() // no commit after this
	for {
		select {
		case m.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		msg, err := r.FetchMessage(ctx)
		if err != nil {
			<-m.slots
			if ctx.Err() != nil || errors.Is(err, io.EOF) {
				return
			}
			logx.Errorf("consumer: fetch partition %d: %v", a.ID, err)
			continue
		}
		e := &entry{msg: msg, done: make(chan error, 1)}
		q <- e // in fetch order: the partition's offsets increase
		done := func(err error) {
			e.done <- err
			<-m.slots
		}
		if err := m.check(msg); err != nil {
			m.h.Reject(string(msg.Key), string(msg.Value), err.Error(), done)
		} else {
			tctx, tdone := m.consume(msg, done)
			m.h.Submit(tctx, string(msg.Key), string(msg.Value), tdone)
		}
		m.handed.note(msg.Partition, msg.Offset)
	}
}

// check is m.verify's verdict on msg (nil without one).
func (m *member) check(msg kafka.Message) error {
	if m.verify == nil {
		return nil
	}
	return m.verify(msg)
}

// commit commits a partition's offsets in order, in gen: it waits for each message's
// outcome in fetch order and commits the last of every run of durable messages. A message
// that is not durable stops the partition's commits: it and everything after it come
// again. When gen ends (ctx), it commits nothing more: what it had not committed comes
// again from the last commit, to whichever member the next generation gives the partition.
func (m *member) commit(ctx context.Context, gen *kafka.Generation, q chan *entry) {
	var next *entry
	for {
		e := next
		if e == nil {
			select {
			case e = <-q:
			case <-ctx.Done():
				return
			}
		}
		var err error
		select {
		case err = <-e.done:
		case <-ctx.Done():
			return
		}
		if err != nil {
			logx.Errorf("consumer: partition %d offset %d not applied (%v): nothing after it is committed", e.msg.Partition,
				e.msg.Offset, err)
			<-ctx.Done()
			return
		}
		var last *entry
		last, next = durableRun(e, q)
		if ctx.Err() != nil {
			return // the generation ended or stopping: commit nothing more
		}
		commitOffset(ctx, gen, last.msg)
	}
}

// commitOffset commits the offset after msg in gen, retrying with backoff while gen lasts:
// Kafka is away or the group is rebalancing; if gen ends first, the partition's next owner
// reads from the last commit (the writer is idempotent).
func commitOffset(ctx context.Context, gen *kafka.Generation, msg kafka.Message) {
	offsets := map[string]map[int]int64{msg.Topic: {msg.Partition: msg.Offset + 1}}
	for wait := commitRetryMin; ; wait = min(2*wait, commitRetryMax) {
		err := gen.CommitOffsets(offsets)
		if err == nil || ctx.Err() != nil {
			return
		}
		logx.Errorf("consumer: commit partition %d offset %d: %v", msg.Partition, msg.Offset, err)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return
		}
	}
}

// durableRun is e and everything already durable behind it in q: the last of them (what
// one commit covers) and the entry that ended the run (nil: q was empty). A failed entry
// ends it, its error put back to be seen again.
func durableRun(e *entry, q chan *entry) (last, next *entry) {
	last = e
	for {
		select {
		case n := <-q:
			select {
			case err := <-n.done:
				if err != nil {
					n.done <- err // seen again at the committer's next turn
					return last, n
				}
				last = n
			default:
				return last, n
			}
		default:
			return last, nil
		}
	}
}
