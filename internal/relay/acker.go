package relay

import (
	"context"
	"errors"
	"fmt"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
)

// Acker holds a change's answer until its event is in Kafka, so that what a caller was
// told stays true when Redis loses its data right after (DESIGN.md, "Acknowledged only
// once in Kafka"). The instance that made the change produces the entry itself, to the
// relay's topic (acks=all; kafka-go batches concurrent calls), and then checks
// that the book that made it still sells: the activity's stock hash holds the epoch the
// script saw (a flush or a rebuild since would have replaced it), and in the same step
// deletes the entry from the outbox. Only then is the change acknowledged. The relay
// waits Conf.AckWait before it produces a young entry, and skips what an Acker deleted
// meanwhile: each acknowledged entry is produced once, but for an Acker slower than
// that (at least once: the writer is idempotent). An entry whose Acker failed stays in
// the outbox for the relay.
//
// Failing a step answers BUSY ("retry with the same request_id"): the change is
// made in Redis, so a retry replays it (or, after a rebuild without it, makes it anew);
// an event that reached Kafka but whose book was replaced is dropped by the writer's
// epoch fence if the rebuild went ahead without it.
type Acker struct {
	events kafkax.Sender
	store  *stock.Store
	keys   stock.Keys
}

// Acker returns an acker producing to the relay's events topic, through a producer of its
// own (Conf.AckBatchSize), or the relay's when the relay was given its senders.
func (r *Relay) Acker() *Acker {
	if r.acks != nil {
		return NewAcker(r.acks, r.store)
	}
	return NewAcker(r.events, r.store)
}

// NewAcker returns an acker producing through events (tests inject failing ones).
func NewAcker(events kafkax.Sender, store *stock.Store) *Acker {
	return &Acker{events: events, store: store, keys: store.Keys()}
}

// Ack is a stock.Ack: nil once e is in Kafka and its book still sells.
func (a *Acker) Ack(ctx context.Context, e stock.Entry) error {
	it := toItem(a.keys.Events(e.ActivityID), red.XMessage{ID: e.ID, Values: e.Values})
	if it.dead {
		// A script wrote an entry that is not an event: a bug. The relay dead-letters it.
		return fmt.Errorf("outbox entry %s of activity %d is not a valid event", e.ID, e.ActivityID)
	}
	if err := a.events.Send(ctx, it.msg); err != nil {
		// BUSY without a cause: Kafka, not Redis, failed (degrade mode must not switch).
		acksKafkaFailed.Inc()
		return xerr.Newf(xerr.Busy, "the event is not in Kafka yet (%v), retry with the same request_id", err)
	}
	// The check and the outbox entry's deletion are one script: the relay does not
	// produce again what is in Kafka already.
	same, epoch, err := a.store.Acked(ctx, e)
	switch {
	case errors.Is(err, stock.ErrNotWarm) || err == nil && !same:
		acksBookReplaced.Inc()
		logx.Errorf("acker: activity %d: the stock hash of epoch %d is gone (now %d, %v) since entry %s was written",
			e.ActivityID, e.Epoch, epoch, err, e.ID)
		return xerr.Newf(xerr.Busy, "activity %d is being rebuilt, retry with the same request_id", e.ActivityID)
	case err != nil:
		acksCheckFailed.Inc()
		return err // Redis failing: a dependency failure (degrade mode may switch)
	}
	acksAcknowledged.Inc()
	return nil
}
