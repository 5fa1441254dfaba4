package stock

import (
	"context"
	"errors"
	"fmt"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/internal/event"
)

// Outbox is the store's view of the activities' outbox streams: acknowledgements, lengths
// and the relay's reads (docs/DESIGN.md, "Acknowledged only once in Kafka").
type Outbox struct{ s *Store }

// Outbox returns the store's outbox operations.
func (s *Store) Outbox() Outbox { return Outbox{s: s} }

// Entry is an outbox entry as a script wrote it: its stream id and values (one field,
// event.FieldEntry, for an entry written since entries are packed: one change's event, or a
// reserve batch's events), and, read from them, the epoch of the stock hash it was written
// under (event.FieldEpoch) and the change's seq (a batch is one change); the request's
// traceparent stays in the values (event.FieldTraceParent), where the relay reads it.
type Entry struct {
	ActivityID int64
	ID         string
	Values     map[string]any
	Epoch      int64
	Seq        int64 // the stock hash's change count 'seq' the change made (event.FieldSeq; 0: none)
}

// written is the entry a change wrote, its id and v (the packed entry), for the caller to
// acknowledge.
func written(aid int64, id string, v any) ([]Entry, error) {
	e, err := newEntry(aid, id, v)
	if err != nil {
		return nil, err
	}
	return []Entry{e}, nil
}

// unsentList reads the entries of an already-made change that a script found still in the
// outbox (v: unsent.lua's flat list; nil: none): a retry's answer waits on them.
func unsentList(aid int64, v any) ([]Entry, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("stock script reply: bad unsent entries %v", v)
	}
	return entryList(aid, list)
}

// entryList reads a flat list of entries a script returned: id, entry, id, entry... (each
// entry packed, or its stream fields).
func entryList(aid int64, list []any) ([]Entry, error) {
	var es []Entry
	for j := 0; j+1 < len(list); j += 2 {
		id, ok := list[j].(string)
		if !ok {
			return nil, fmt.Errorf("stock script reply: bad entry id %v", list[j])
		}
		e, err := newEntry(aid, id, list[j+1])
		if err != nil {
			return nil, err
		}
		es = append(es, e)
	}
	return es, nil
}

// Len is the number of entries in an activity's outbox stream the relay has not moved to
// Kafka yet (degrade mode waits for 0 before MySQL sells; the relay retires an activity at 0).
func (o Outbox) Len(ctx context.Context, aid int64) (int64, error) {
	s := o.s
	var n *red.IntCmd
	err := s.rds.PipelinedCtx(ctx, func(p redis.Pipeliner) error {
		n = p.XLen(ctx, s.keys.Events(aid))
		return nil
	})
	if err != nil {
		return 0, dep(err)
	}
	return n.Val(), nil
}

// Conn opens a connection of its own to Redis (a blocking node) for the relay's reads of the
// outbox streams, so a blocking read holds no connection of the store's pool, and returns the
// store's keys, which name them (Keys.Events); Close it when done.
func (o Outbox) Conn() (redis.ClosableNode, Keys, error) {
	node, err := redis.CreateBlockingNode(o.s.rds)
	return node, o.s.keys, err
}

// Entries returns up to count entries of the activity's outbox with ids from start to stop
// (XRANGE), through the store's pool.
func (o Outbox) Entries(ctx context.Context, aid int64, start, stop string, count int64) ([]red.XMessage, error) {
	var cmd *red.XMessageSliceCmd
	err := o.s.rds.PipelinedCtx(ctx, func(p redis.Pipeliner) error {
		cmd = p.XRangeN(ctx, o.s.keys.Events(aid), start, stop, count)
		return nil
	})
	if err != nil && !errors.Is(err, red.Nil) {
		return nil, err
	}
	return cmd.Val(), nil
}

// Append adds packed entries (event.Event.Pack) to the activity's outbox in one pipeline.
func (o Outbox) Append(ctx context.Context, aid int64, entries []string) error {
	return o.s.rds.PipelinedCtx(ctx, func(p redis.Pipeliner) error {
		for _, e := range entries {
			p.XAdd(ctx, &red.XAddArgs{Stream: o.s.keys.Events(aid), Values: []any{event.FieldEntry, e}})
		}
		return nil
	})
}
