package relay

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/logx"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
)

// Acker holds a change's answer until its event is in Kafka and the book that made it still
// sells (docs/DESIGN.md, "Acknowledged only once in Kafka"); a failed step answers BUSY.
type Acker struct {
	events kafkax.Sender
	topic  string // events' topic, for traces
	store  *stock.Store

	// The epoch checks of one activity are batched in rounds, one acked.lua call each.
	mu      sync.Mutex
	rounds  map[int64][]*ackRound // per activity: rounds not yet run, the last one open
	running map[int64]bool        // per activity: a goroutine runs its rounds
	tallies map[int64]*ackTally   // per activity: what this Acker acknowledged (rollback check)
	lost    map[int64]int64       // per activity: the epoch found rolled back, its stock hash not deleted yet
}

// ackTally is what an Acker acknowledged of one activity in one epoch: the highest change count
// ('seq'), the entry of each of the last tallyWindow seqs and the Redis they were checked on (the
// partial-rollback check).
type ackTally struct {
	epoch int64
	line  string // the replication id of the Redis that served the checks (stock.Outbox.Acked)
	max   int64
	maxID string           // the entry of seq max
	seen  map[int64]string // seq -> entry id
	order []int64          // seen's seqs, oldest first
}

// tallyWindow bounds ackTally.seen: acknowledgements of one activity arrive out of seq
// order by at most the changes in flight at once.
const tallyWindow = 1024

// ackRound is one batched check: entries joined until it ran (or it was full).
type ackRound struct {
	entries []stock.Entry
	same    []bool
	epoch   int64
	lost    bool // Redis lost writes this Acker acknowledged (ackTally): none is acknowledged
	err     error
	done    chan struct{}
}

// ackCheckTimeout bounds one batched check (it serves several callers: no one's context).
const ackCheckTimeout = 3 * time.Second

// NewAcker returns an acker producing through events (tests inject failing ones).
func NewAcker(events kafkax.Sender, store *stock.Store) *Acker {
	return &Acker{events: events, store: store}
}

// AckBatch acknowledges the entries of one call (one activity's): they go to Kafka in one
// produce and through one epoch check; errs[i] is nil once es[i] is in Kafka and its stock hash
// still of its epoch. The Redis book calls it after the script (rpc/internal/book.Redis). A
// traced call waits in the span relay.ack_wait.
func (a *Acker) AckBatch(ctx context.Context, es []stock.Entry) (errs []error) {
	errs = make([]error, len(es))
	if len(es) == 0 {
		return errs
	}
	aid := es[0].ActivityID
	var span oteltrace.Span
	if event.Sampled(ctx) { // before the attributes: not sampled, no work
		ctx, span = event.StartSpan(ctx, "relay.ack_wait", oteltrace.SpanKindInternal, nil,
			event.AttrActivity.Int64(aid), attrSeq.Int64(es[0].Seq), semconv.MessagingBatchMessageCount(len(es)))
	}
	outcome := "acknowledged"
	defer func() {
		if span != nil {
			event.EndSpan(span, firstErr(errs), attrOutcome.String(outcome))
		}
	}()
	b := a.sortOut(es, aid, errs)
	if len(b.valid) < len(es) {
		outcome = "invalid"
	}
	msgs, traces, valid, at := b.msgs, b.traces, b.valid, b.at
	if len(valid) == 0 {
		return errs
	}
	fail := func(err error) {
		for _, i := range at {
			errs[i] = err
		}
	}
	for _, e := range valid {
		if a.reissued(e) {
			// Redis made this change under a count it had made an acknowledged one under: it
			// lost writes, whether or not any check of its activity ran since (docs/DESIGN.md).
			acksRolledBack.Add(float64(len(msgs)))
			outcome = "rolled_back"
			a.lose(aid, e.Epoch, e.Seq)
			fail(xerr.Newf(xerr.Busy, "activity %d: Redis lost acknowledged changes and is being rebuilt, "+
				"retry with the same request_id", aid))
			return errs
		}
	}
	if err := sendTraced(ctx, a.events, a.topic, msgs, traces); err != nil {
		// BUSY without a cause: Kafka, not Redis, failed (degrade mode must not switch).
		acksKafkaFailed.Add(float64(len(msgs)))
		outcome = "kafka_failed"
		fail(xerr.Newf(xerr.Busy, "the event is not in Kafka yet (%v), retry with the same request_id", err))
		return errs
	}
	// The check and the outbox entries' deletion are one script: the relay does not
	// produce again what is in Kafka already.
	same, epoch, lost, err := a.acked(ctx, aid, valid)
	switch {
	case err == nil && lost:
		acksRolledBack.Add(float64(len(msgs)))
		outcome = "rolled_back"
		fail(xerr.Newf(xerr.Busy, "activity %d: Redis lost acknowledged changes and is being rebuilt, "+
			"retry with the same request_id", aid))
		return errs
	case err != nil && !errors.Is(err, stock.ErrNotWarm):
		acksCheckFailed.Add(float64(len(msgs)))
		outcome = "check_failed"
		fail(err) // Redis failing: a dependency failure (degrade mode may switch)
		return errs
	}
	if replaced(aid, b, same, epoch, err, errs) {
		outcome = "book_replaced"
	}
	return errs
}

// ackBatch is the part of an AckBatch call that is valid events of its activity.
type ackBatch struct {
	msgs   []kafkax.Message
	traces []oteltrace.SpanContext
	valid  []stock.Entry
	at     []int // valid[j] is es[at[j]]
	events []int // valid[j] holds events[j] events (a reservation batch's entry several)
}

// sortOut returns the entries of es that are valid events of activity aid, and sets errs[i]
// of the others.
func (a *Acker) sortOut(es []stock.Entry, aid int64, errs []error) ackBatch {
	b := ackBatch{
		msgs:   make([]kafkax.Message, 0, len(es)),
		traces: make([]oteltrace.SpanContext, 0, len(es)),
		valid:  make([]stock.Entry, 0, len(es)),
		at:     make([]int, 0, len(es)),
		events: make([]int, 0, len(es)),
	}
	for i, e := range es {
		// No stream name: the Acker produces no dead letter (the relay does, naming the stream).
		it := toItem("", red.XMessage{ID: e.ID, Values: e.Values})
		if it.dead || e.ActivityID != aid {
			// A script wrote an entry that is not an event: a bug. The relay dead-letters it.
			errs[i] = fmt.Errorf("outbox entry %s of activity %d is not a valid event of activity %d",
				e.ID, e.ActivityID, aid)
			continue
		}
		b.msgs, b.traces = append(b.msgs, it.msgs...), append(b.traces, it.traces...)
		b.valid, b.at, b.events = append(b.valid, e), append(b.at, i), append(b.events, len(it.msgs))
	}
	return b
}

// item is an outbox entry ready to produce: its events for the topic (one message each: a
// reserve batch's entry holds several), or one dead letter. It is in Kafka once all are.
type item struct {
	id     string
	msgs   []kafkax.Message
	dead   bool
	traces []oteltrace.SpanContext // of the request that made each change (invalid: not traced)
}

// toItem is the events of an outbox entry, or one dead letter when any does not parse, with
// the trace context of the change as a header.
func toItem(key string, m red.XMessage) item {
	if it, ok := fastItem(m); ok {
		return it
	}
	it := item{id: m.ID}
	as, err := event.EntryAttributes(m.Values)
	for _, a := range as {
		var ev event.Event
		if ev, err = event.FromAttributes(m.ID, a); err != nil {
			break
		}
		v, merr := ev.Marshal()
		if err = merr; err != nil {
			break // cannot happen for a validated event; keep it visible anyway
		}
		msg, trace := withTraceHeader(kafkax.Message{Key: []byte(ev.Key()), Value: v}, a[event.FieldTraceParent])
		it.msgs, it.traces = append(it.msgs, msg), append(it.traces, trace)
	}
	if err != nil {
		var tp string
		if len(as) > 0 {
			tp = as[0][event.FieldTraceParent]
		}
		msg, trace := withTraceHeader(kafkax.DeadLetter{Source: kafkax.SourceOutbox, Reason: err.Error(), Key: key,
			EntryID: m.ID, Payload: fmt.Sprint(m.Values)}.Message(), tp)
		it.dead, it.msgs, it.traces = true, []kafkax.Message{msg}, []oteltrace.SpanContext{trace}
	}
	return it
}

// fastItem is toItem of a well-formed entry (event.EntryEvents), the trace context its events
// share read once (withTraceHeader's header, one read-only slice for all: Signer.Sign copies
// it); ok false: toItem reads it as before.
func fastItem(m red.XMessage) (_ item, ok bool) {
	evs, tp, ok := event.EntryEvents(m.ID, m.Values)
	if !ok {
		return item{}, false
	}
	sc := event.SpanContextOf(tp)
	var hs []kafkax.HeaderKV
	if sc.IsValid() {
		hs = []kafkax.HeaderKV{{Key: event.HeaderTraceParent, Value: []byte(tp)}}
	}
	it := item{id: m.ID, msgs: make([]kafkax.Message, len(evs)), traces: make([]oteltrace.SpanContext, len(evs))}
	for i, ev := range evs {
		v, err := ev.Marshal()
		if err != nil {
			return item{}, false
		}
		it.msgs[i] = kafkax.Message{Key: []byte(ev.Key()), Value: v, Headers: hs[:len(hs):len(hs)]}
		it.traces[i] = sc
	}
	return it, true
}

// replaced counts the verdict of the epoch check (same, epoch, err: ErrNotWarm or nil) on
// each of b's entries and sets the error of those whose book is gone; it reports whether
// any was.
func replaced(aid int64, b ackBatch, same []bool, epoch int64, err error, errs []error) bool {
	gone := false
	for j, e := range b.valid {
		if err == nil && same[j] {
			acksAcknowledged.Add(float64(b.events[j]))
			continue
		}
		acksBookReplaced.Add(float64(b.events[j]))
		gone = true
		logx.Errorf("acker: activity %d: the stock hash of epoch %d is gone (now %d, %v) since entry %s was written",
			aid, e.Epoch, epoch, err, e.ID)
		errs[b.at[j]] = xerr.Newf(xerr.Busy, "activity %d is being rebuilt, retry with the same request_id", aid)
	}
	return gone
}

// firstErr is the first non-nil error of errs.
func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// acked is Outbox.Acked of es (one activity's), batched with the concurrent checks of its
// activity: es joins the open round while it has room, further rounds after it.
func (a *Acker) acked(ctx context.Context, aid int64, es []stock.Entry) (same []bool, epoch int64, lost bool,
	err error) {
	type part struct {
		r     *ackRound
		first int
		n     int
	}
	var parts []part
	a.mu.Lock()
	if a.rounds == nil {
		a.rounds, a.running = map[int64][]*ackRound{}, map[int64]bool{}
	}
	for rest := es; len(rest) > 0; {
		q := a.rounds[aid]
		if len(q) == 0 || len(q[len(q)-1].entries) >= stock.MaxAckedBatch {
			q = append(q, &ackRound{done: make(chan struct{})})
			a.rounds[aid] = q
		}
		r := q[len(q)-1]
		n := min(len(rest), stock.MaxAckedBatch-len(r.entries))
		parts = append(parts, part{r: r, first: len(r.entries), n: n})
		r.entries = append(r.entries, rest[:n]...)
		rest = rest[n:]
	}
	if !a.running[aid] {
		a.running[aid] = true
		go a.run(aid)
	}
	a.mu.Unlock()
	same = make([]bool, 0, len(es))
	for _, p := range parts {
		select {
		case <-p.r.done:
		case <-ctx.Done():
			return nil, 0, false, xerr.Unavailable(ctx.Err())
		}
		if p.r.err != nil {
			return nil, p.r.epoch, false, p.r.err
		}
		lost = lost || p.r.lost
		epoch = p.r.epoch
		same = append(same, p.r.same[p.first:p.first+p.n]...)
	}
	return same, epoch, lost, nil
}

// run checks activity aid's rounds in order until none is left.
func (a *Acker) run(aid int64) {
	for {
		a.mu.Lock()
		q := a.rounds[aid]
		if len(q) == 0 {
			delete(a.rounds, aid)
			delete(a.running, aid)
			a.mu.Unlock()
			return
		}
		r := q[0]
		a.rounds[aid] = q[1:] // closed to new entries from here on
		a.mu.Unlock()
		// A round checks the entries of many requests: its calls are no one's (untraced).
		ctx, cancel := context.WithTimeout(event.Untraced(context.Background()), ackCheckTimeout)
		var seq int64
		var line string
		r.same, r.epoch, seq, line, r.err = a.store.Outbox().Acked(ctx, aid, r.entries)
		if r.err == nil {
			acksBatched.Observe(float64(len(r.entries)))
			if r.lost = a.rolledBack(aid, r, seq, line); r.lost {
				// Every call then finds the activity not warm and rebuilds it from MySQL,
				// which has every acknowledged change once the writer drained Kafka.
				a.lose(aid, r.epoch, seq)
			}
		} else {
			r.same = make([]bool, len(r.entries))
			if errors.Is(r.err, stock.ErrNotWarm) {
				a.forgetMark(aid)
			}
		}
		cancel()
		close(r.done)
	}
}

// rolledBack tells whether round r, checked against a stock hash of change count seq on the
// Redis of replication id line, shows that Redis may have lost writes this Acker acknowledged
// (ackTally): its counts, or another Redis serving the hash since (a failover or a restart,
// which can lose what another inventory service acknowledged, unseen by the counts here); when
// it does not, it records the round's acknowledged entries.
func (a *Acker) rolledBack(aid int64, r *ackRound, seq int64, line string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tallies == nil {
		a.tallies = map[int64]*ackTally{}
	}
	m := a.tallies[aid]
	if m == nil || m.epoch != r.epoch {
		m = &ackTally{epoch: r.epoch, seen: map[int64]string{}}
		a.tallies[aid] = m
	}
	lost := seq < m.max || m.line != "" && line != m.line
	for i, e := range r.entries {
		if !r.same[i] || e.Seq <= 0 {
			continue
		}
		if id, ok := m.seen[e.Seq]; e.Seq > seq || ok && id != e.ID {
			lost = true
		}
	}
	if lost {
		return true
	}
	m.line = line
	for i, e := range r.entries {
		if !r.same[i] || e.Seq <= 0 {
			continue
		}
		if _, ok := m.seen[e.Seq]; !ok {
			m.seen[e.Seq] = e.ID
			m.order = append(m.order, e.Seq)
		}
		if e.Seq > m.max {
			m.max, m.maxID = e.Seq, e.ID
		}
	}
	if n := len(m.order); n > 2*tallyWindow {
		for _, q := range m.order[:n-tallyWindow] {
			delete(m.seen, q)
		}
		m.order = append([]int64(nil), m.order[n-tallyWindow:]...)
	}
	return false
}

// reissued tells whether entry e, handed to the Acker, shows that Redis lost changes it
// acknowledged: its activity is being dropped, or e's count and stream id disagree with the
// highest acknowledged (in a Redis that keeps its writes both grow together), or e's count
// was acknowledged for another entry.
func (a *Acker) reissued(e stock.Entry) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ep, ok := a.lost[e.ActivityID]; ok && ep == e.Epoch {
		return true
	}
	m := a.tallies[e.ActivityID]
	if m == nil || m.epoch != e.Epoch || e.Seq <= 0 || m.maxID == "" {
		return false
	}
	if id, ok := m.seen[e.Seq]; ok {
		return id != e.ID
	}
	return e.Seq != m.max && (e.Seq < m.max) != streamIDLess(e.ID, m.maxID)
}

// streamIDLess orders two stream entry ids ("ms-seq").
func streamIDLess(x, y string) bool {
	xm, xs := splitStreamID(x)
	ym, ys := splitStreamID(y)
	return xm < ym || xm == ym && xs < ys
}

func splitStreamID(id string) (ms, seq uint64) {
	a, b, _ := strings.Cut(id, "-")
	ms, _ = strconv.ParseUint(a, 10, 64)
	seq, _ = strconv.ParseUint(b, 10, 64)
	return ms, seq
}
