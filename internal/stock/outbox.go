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
// event.FieldEntry, for an entry written since entries are packed), and, read from them, the
// epoch of the stock hash it was written under (event.FieldEpoch).
type Entry struct {
	ActivityID int64
	ID         string
	Values     map[string]any
	Epoch      int64
	Seq        int64 // the stock hash's change count 'seq' the change made (event.FieldSeq; 0: none)
	// TraceParent is the W3C traceparent of the request that made the change
	// (event.FieldTraceParent; "": not traced).
	TraceParent string
}

// Ack decides whether the change that wrote e may be acknowledged (relay.Acker); an error is
// returned to the caller as it is, the change staying made for a retry to replay.
type Ack func(ctx context.Context, e Entry) error

// AckBatch is Ack for the entries of one call at once (a reservation batch): errs[i] is es[i]'s.
type AckBatch func(ctx context.Context, es []Entry) (errs []error)

// SetAck makes every acknowledged change wait for ack, one entry at a time (nil: answer once
// Redis has it). Call it before serving.
func (o Outbox) SetAck(ack Ack) {
	if ack == nil {
		o.s.ack = nil
		return
	}
	o.s.ack = func(ctx context.Context, es []Entry) []error {
		errs := make([]error, len(es))
		for i, e := range es {
			errs[i] = ack(ctx, e)
		}
		return errs
	}
}

// SetAckBatch is SetAck with a hook that takes each call's entries in one go.
func (o Outbox) SetAckBatch(ack AckBatch) { o.s.ack = ack }

// wantEntry is reserve's ARGV[3]: "1" when the script is to return its outbox entries (an
// ack hook reads them), "0" when only the entry ids are needed.
func (s *Store) wantEntry() string {
	if s.ack == nil {
		return "0"
	}
	return "1"
}

// acked hands the entry at res[i] (id) and res[i+1] (the entry) to the ack hook, if any.
func (s *Store) acked(ctx context.Context, aid int64, res []any, i int) error {
	if s.ack == nil {
		return nil
	}
	e, err := entryAt(aid, res, i)
	if err != nil {
		return err
	}
	return s.ack(ctx, []Entry{e})[0]
}

// ackUnsent hands to the ack hook, in one go, the entries of an already-made change that a
// script found still in the outbox (res[i]: unsent.lua's flat list; absent or empty: none).
func (s *Store) ackUnsent(ctx context.Context, aid int64, res []any, i int) error {
	if s.ack == nil || i >= len(res) {
		return nil
	}
	list, ok := res[i].([]any)
	if !ok {
		return fmt.Errorf("stock script reply: bad unsent entries %v", res[i])
	}
	var es []Entry
	for j := 0; j+1 < len(list); j += 2 {
		e, err := entryAt(aid, list, j)
		if err != nil {
			return err
		}
		es = append(es, e)
	}
	if len(es) == 0 {
		return nil
	}
	return firstErr(s.ack(ctx, es)...)
}

// entryAt parses the entry a script returned at res[i] (its id) and res[i+1]: the entry as a
// script packs it (entry.lua), or its stream fields as XRANGE returns them (unsent.lua).
func entryAt(aid int64, res []any, i int) (Entry, error) {
	if i+1 >= len(res) {
		return Entry{}, fmt.Errorf("stock script reply without its outbox entry: %v", res)
	}
	return newEntry(aid, toString(res, i), res[i+1])
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
	// An entry that does not parse stays as it is: the ack hook refuses it (relay.Acker).
	if a, err := event.Attributes(values); err == nil {
		e.Epoch, _ = strconv.ParseInt(a[event.FieldEpoch], 10, 64)
		e.Seq, _ = strconv.ParseInt(a[event.FieldSeq], 10, 64)
		e.TraceParent = a[event.FieldTraceParent]
	}
	return e, nil
}

// MaxAckedBatch bounds the entries of one Acked call.
const MaxAckedBatch = 256

// Acked deletes from the outbox the entries es (1..MaxAckedBatch, in Kafka) whose epoch the stock
// hash still holds, reporting each in same, with the hash's epoch and seq; ErrNotWarm when it is gone.
func (o Outbox) Acked(ctx context.Context, aid int64, es []Entry) (same []bool, epoch, seq int64, err error) {
	s := o.s
	if len(es) == 0 || len(es) > MaxAckedBatch {
		return nil, 0, 0, fmt.Errorf("stock: %d entries to check, want 1..%d", len(es), MaxAckedBatch)
	}
	args := make([]any, 0, 2*len(es))
	for _, e := range es {
		args = append(args, e.Epoch, e.ID)
	}
	res, err := s.run(ctx, ackedScript, aid, []string{s.keys.Stock(aid), s.keys.Events(aid)}, args...)
	if err != nil {
		return nil, 0, 0, err
	}
	if len(res) != 3+len(es) {
		return nil, 0, 0, fmt.Errorf("stock script acked: %d results for %d entries", len(res)-3, len(es))
	}
	same = make([]bool, len(es))
	for i := range es {
		same[i] = toInt(res, 3+i) == 1
	}
	return same, toInt(res, 1), toInt(res, 2), nil
}

// OutboxLen is the number of entries in an activity's outbox stream the relay has not
// moved to Kafka yet (degrade mode waits for 0 before MySQL sells).
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
