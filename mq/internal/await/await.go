// Package await tells the writer whether an event a parked event may be waiting for can
// still arrive (writer.Writer.Awaited): not once its activity's outbox holds nothing older
// and the writer group has consumed what was on the topic then (docs/DESIGN.md, "The writer
// (mq)").
package await

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/stock"
)

// targetTTL: targets older than this are forgotten (and taken again: later, never unsound).
const targetTTL = 10 * time.Minute

// Check is the writer's Awaited check. Its funcs are what it reads.
type Check struct {
	// First returns the id of the oldest entry of the activity's outbox stream; ok false
	// when it holds none (or does not exist).
	First func(ctx context.Context, aid int64) (id string, ok bool, err error)
	// Ends returns the topic's end offsets.
	Ends func(ctx context.Context) (kafkax.Offsets, error)
	// Consumed returns, per partition, how far the writer group has consumed: this
	// process's handed position, else the group's committed offset.
	Consumed func(ctx context.Context, partitions []int) (kafkax.Offsets, error)

	mu      sync.Mutex
	targets map[eventKey]target // an event -> the ends read once its stream had nothing before it
}

// eventKey is an event: ids are unique within an activity's stream only.
type eventKey struct {
	aid int64
	id  string
}

// target is what the writer group must reach before the event is awaited: the topic's ends, read
// once the event's stream had nothing before it.
type target struct {
	ends kafkax.Offsets
	at   time.Time
}

// New builds the check from the inventory's outbox, the topic's progress and this
// process's handed positions (consumer.Group.Handed).
func New(outbox stock.Outbox, progress *kafkax.Progress, handed func() map[int]int64) *Check {
	return &Check{
		First: func(ctx context.Context, aid int64) (string, bool, error) {
			msgs, err := outbox.Entries(ctx, aid, "-", "+", 1)
			if err != nil {
				return "", false, err
			}
			if len(msgs) == 0 {
				return "", false, nil
			}
			return msgs[0].ID, true, nil
		},
		Ends: progress.Ends,
		Consumed: func(ctx context.Context, parts []int) (kafkax.Offsets, error) {
			committed, err := progress.Committed(ctx, parts)
			if err != nil {
				return nil, err
			}
			for p, o := range handed() {
				committed[p] = max(committed[p], o)
			}
			return committed, nil
		},
	}
}

// Awaited reports whether an event ev may be waiting for can still arrive: true while
// its activity's outbox holds an entry older than ev, then until the writer group has
// consumed what was on the topic when the outbox was seen so. An error means "cannot
// tell" (the caller keeps waiting).
func (c *Check) Awaited(ctx context.Context, ev event.Event) (bool, error) {
	key := eventKey{ev.ActivityID, ev.EventID}
	c.mu.Lock()
	m, ok := c.targets[key]
	c.mu.Unlock()
	if !ok {
		first, found, err := c.First(ctx, ev.ActivityID)
		if err != nil {
			return true, fmt.Errorf("outbox of activity %d: %w", ev.ActivityID, err)
		}
		if found && !notBefore(first, ev.EventID) {
			return true, nil // an older change is still in the outbox
		}
		ends, err := c.Ends(ctx)
		if err != nil {
			return true, err
		}
		m = target{ends: ends, at: time.Now()}
		c.mu.Lock()
		if c.targets == nil {
			c.targets = map[eventKey]target{}
		}
		for id, old := range c.targets {
			if time.Since(old.at) > targetTTL {
				delete(c.targets, id)
			}
		}
		c.targets[key] = m
		c.mu.Unlock()
	}
	parts := make([]int, 0, len(m.ends))
	for p := range m.ends {
		parts = append(parts, p)
	}
	consumed, err := c.Consumed(ctx, parts)
	if err != nil {
		return true, err
	}
	for p, end := range m.ends {
		if max(consumed[p], 0) < end { // -1: nothing committed, fine for an empty partition
			return true, nil
		}
	}
	c.mu.Lock()
	delete(c.targets, key)
	c.mu.Unlock()
	return false, nil
}

// notBefore reports whether first (the oldest entry of a stream) is at or after id, i.e.
// the stream holds nothing older than id; ids compare numerically (ms, then seq). With an
// id that does not parse, false: only an empty stream clears such an event.
func notBefore(first, id string) bool {
	im, is, ok1 := parseID(id)
	fm, fs, ok2 := parseID(first)
	if !ok1 || !ok2 {
		return false
	}
	return fm > im || fm == im && fs >= is
}

// parseID splits a stream id "ms-seq".
func parseID(id string) (ms, seq uint64, ok bool) {
	a, b, found := strings.Cut(id, "-")
	if !found {
		return 0, 0, false
	}
	ms, err1 := strconv.ParseUint(a, 10, 64)
	seq, err2 := strconv.ParseUint(b, 10, 64)
	return ms, seq, err1 == nil && err2 == nil
}
