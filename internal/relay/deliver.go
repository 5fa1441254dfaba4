package relay

import (
	"context"
	"errors"
	"time"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/logx"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/kafkax"
)

// deliver produces msgs (unparsable ones as dead letters), retrying until Kafka has them or the
// relay stops, and acknowledges and deletes those Kafka took; it returns how many it removed.
func (r *worker) deliver(ctx context.Context, msgs []red.XMessage) int {
	key := r.stream.name(r.aid)
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
		logx.Errorf("relay: ack %d entries of %s: %v", len(ids), r.stream.name(r.aid), err)
		return false
	}
	return true
}
