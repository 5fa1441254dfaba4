package relay

import (
	"context"
	"errors"
	"fmt"
	"time"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/logx"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
)

// deliver produces msgs (unparsable ones as dead letters), retrying until Kafka has them or the
// relay stops, and acknowledges and deletes those Kafka took; it returns how many it removed.
func (r *worker) deliver(ctx context.Context, msgs []red.XMessage) int {
	key := r.store.Outbox().Name(r.aid)
	items, gone := toItems(key, msgs)
	if len(gone) > 0 {
		r.ackDelete(ctx, gone)
	}
	removed := 0
	backoff := 50 * time.Millisecond
	for len(items) > 0 && ctx.Err() == nil {
		acked, err := r.produce(ctx, key, items)
		var n int
		items, n = r.remove(ctx, items, acked)
		removed += n
		if len(items) > 0 {
			metricErrors.WithLabelValues("produce").Inc()
			logx.Errorf("relay: %d entries of %s not acknowledged by Kafka, retrying in %v: %v",
				len(items), key, backoff, err)
			sleepCtx(ctx, backoff)
			backoff = min(backoff*2, 5*time.Second)
		}
	}
	return removed
}

// item is an outbox entry ready to produce: its events for the topic (one message each: a
// reserve batch's entry holds several), or one dead letter. It is in Kafka once all are.
type item struct {
	id     string
	msgs   []kafkax.Message
	dead   bool
	traces []oteltrace.SpanContext // of the request that made each change (invalid: not traced)
}

// toItems turns stream entries into items; gone are the entries deleted from the stream
// while pending (Redis < 7: an id without values).
func toItems(key string, msgs []red.XMessage) (items []item, gone []string) {
	items = make([]item, 0, len(msgs))
	for _, m := range msgs {
		if len(m.Values) == 0 {
			gone = append(gone, m.ID)
			continue
		}
		items = append(items, toItem(key, m))
	}
	return items, gone
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

// produce sends the events to the topic and the dead letters to the dead-letter topic,
// and reports which items Kafka acknowledged.
func (r *Relay) produce(ctx context.Context, key string, items []item) ([]bool, error) {
	var evIdx, deadIdx []int
	for i, it := range items {
		if it.dead {
			deadIdx = append(deadIdx, i)
		} else {
			evIdx = append(evIdx, i)
		}
	}
	acked := make([]bool, len(items))
	err := send(ctx, r.events, r.c.Topic, items, evIdx, acked)
	if len(deadIdx) == 0 {
		return acked, err
	}
	deadErr := send(ctx, r.dead, r.c.DeadLetterTopic, items, deadIdx, acked)
	for _, i := range deadIdx {
		if acked[i] {
			metricDeadLetters.Inc()
			logx.Errorf("relay: outbox entry %s of %s dead-lettered: %s", items[i].id, key,
				header(items[i].msgs[0], kafkax.HeaderReason))
		}
	}
	return acked, errors.Join(err, deadErr)
}

// send produces the messages of the items at idx through s to topic in one call and marks in
// acked the items whose every message Kafka acknowledged.
func send(ctx context.Context, s kafkax.Sender, topic string, items []item, idx []int, acked []bool) error {
	if len(idx) == 0 {
		return nil
	}
	var msgs []kafkax.Message
	var traces []oteltrace.SpanContext
	of := make([]int, 0, len(idx)) // msgs[k] is an event of items[of[k]]
	for _, i := range idx {
		msgs, traces = append(msgs, items[i].msgs...), append(traces, items[i].traces...)
		for range items[i].msgs {
			of = append(of, i)
		}
		acked[i] = true
	}
	err := sendTraced(ctx, s, topic, msgs, traces)
	for k, ok := range kafkax.Acked(err, len(msgs)) {
		acked[of[k]] = acked[of[k]] && ok
	}
	return err
}

// remove acknowledges and deletes the acked items from the outbox and returns the
// others, and how many it removed.
func (r *worker) remove(ctx context.Context, items []item, acked []bool) (rest []item, removed int) {
	var ids []string
	rest = items[:0]
	for i, it := range items {
		if acked[i] {
			ids = append(ids, it.id)
		} else {
			rest = append(rest, it)
		}
	}
	if len(ids) > 0 && r.ackDelete(ctx, ids) {
		removed = len(ids)
		metricRelayed.Add(float64(removed))
	}
	return rest, removed
}

// ackDelete acknowledges and deletes entries in one MULTI, so an entry is never left
// acknowledged but present (which would block the drain check forever). On failure the
// entries stay pending: reclaimed and produced again later (at least once).
func (r *worker) ackDelete(ctx context.Context, ids []string) bool {
	if err := r.stream.AckDelete(ctx, r.aid, Group, ids); err != nil {
		metricErrors.WithLabelValues("ack").Inc()
		logx.Errorf("relay: ack %d entries of %s: %v", len(ids), r.store.Outbox().Name(r.aid), err)
		return false
	}
	return true
}
