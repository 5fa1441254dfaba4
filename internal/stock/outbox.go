package stock

import (
	"context"
	"errors"
	"fmt"
	"strconv"

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

// wantEntry is reserve's and enter's ARGV[3]: "1" when the script is to return its outbox
// entries (WithEntries), "0" when only the entry ids are needed.
func (s *Store) wantEntry() string { return flag(s.entries) }

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

// newEntry is entry id of activity aid from v, its packed entry (a string) or its stream
// fields (a flat field, value list).
func newEntry(aid int64, id string, v any) (Entry, error) {
	var values map[string]any
	switch v := v.(type) {
	case string:
		values = map[string]any{event.FieldEntry: v}
	case []any:
		if len(v)%2 != 0 {
			return Entry{}, fmt.Errorf("stock script reply: bad outbox entry fields %v", v)
		}
		values = make(map[string]any, len(v)/2)
		for j := 0; j < len(v); j += 2 {
			values[toString(v, j)] = toString(v, j+1)
		}
	default:
		return Entry{}, fmt.Errorf("stock script reply: bad outbox entry %v", v)
	}
	e := Entry{ActivityID: aid, ID: id, Values: values}
	// An entry that does not parse stays as it is: the acker refuses it (relay.Acker), and
	// only then reads its epoch and count. A batch's events share both: its first line holds
	// them, and its events' lines are left to the acker, which reads them anyway.
	if a, err := event.EntryShared(values); err == nil {
		e.Epoch, _ = strconv.ParseInt(a[event.FieldEpoch], 10, 64)
		e.Seq, _ = strconv.ParseInt(a[event.FieldSeq], 10, 64)
	}
	return e, nil
}

// MaxAckedBatch bounds the entries of one Acked call.
const MaxAckedBatch = 256

// Acked deletes from the outbox the entries es (1..MaxAckedBatch, in Kafka) whose epoch the stock
// hash still holds, reporting each in same, with the hash's epoch and seq and the replication id of
// the Redis serving it (line: a new one after a failover or a restart); ErrNotWarm when it is gone.
func (o Outbox) Acked(ctx context.Context, aid int64, es []Entry) (same []bool, epoch, seq int64, line string,
	err error) {
	s := o.s
	if len(es) == 0 || len(es) > MaxAckedBatch {
		return nil, 0, 0, "", fmt.Errorf("stock: %d entries to check, want 1..%d", len(es), MaxAckedBatch)
	}
	list := make([]ackedEntryArgs, len(es))
	for i, e := range es {
		list[i] = ackedEntryArgs{Epoch: e.Epoch, ID: e.ID}
	}
	res, err := s.run(ctx, ackedScript, aid, []string{s.keys.Stock(aid), s.keys.Events(aid)},
		argvOf(ackedArgs{Entries: list})...)
	if err != nil {
		return nil, 0, 0, "", err
	}
	head := fields[ackedReply]()
	if len(res) != head+len(es) {
		return nil, 0, 0, "", fmt.Errorf("stock script acked: %d results for %d entries", len(res)-head, len(es))
	}
	same = make([]bool, len(es))
	for i := range es { // then one flag per entry
		same[i] = toInt(res, head+i) == 1
	}
	h := decoded[ackedReply](res)
	return same, h.Epoch, h.Seq, h.Line, nil
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

// Name is the activity's outbox stream as logs and dead letters name it.
func (o Outbox) Name(aid int64) string { return o.s.keys.Events(aid) }

// Conn opens a connection of its own to Redis (a blocking node) for the relay's reads of the
// outbox streams, so a blocking read holds no connection of the store's pool; Close it when done.
func (o Outbox) Conn() (redis.ClosableNode, error) { return redis.CreateBlockingNode(o.s.rds) }

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
