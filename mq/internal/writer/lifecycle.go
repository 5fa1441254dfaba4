package writer

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/model"
)

// The writer's configuration, construction and stop, and its synchronous entry points for
// tools and tests (Consume, Apply); writer.go is an event's way from Submit to its commit.

// ErrStopped is returned to a handler whose event was not applied because the writer
// stopped; the message is not committed (the consumer is closed first) and comes again.
var ErrStopped = errors.New("writer: stopped")

// Conf tunes the writer.
type Conf struct {
	// MaxBatch is the most events in one transaction; 1 is one transaction per event.
	MaxBatch int `json:",default=1000,range=[1:10000]"`
	// PoisonAfter: an event MySQL keeps rejecting as invalid (an UNSIGNED underflow) is
	// retried at least this long, in case the events that precede it are still on their
	// way (they may be in another partition), then dead-lettered once the writer's Awaited
	// check (when set) says no event it may wait for can still arrive.
	PoisonAfter time.Duration `json:",default=30s"`
	// RetryMax caps the backoff between retries of a transient failure (MySQL down).
	RetryMax time.Duration `json:",default=5s"`
	// TxTimeout bounds one transaction.
	TxTimeout time.Duration `json:",default=10s"`
	// LagInterval is how often the consumer group's lag (seckill_writer_consumer_lag_messages)
	// is read from Kafka.
	LagInterval time.Duration `json:",default=5s"`
}

// Stats are the writer's counters (also exported as Prometheus metrics).
type Stats struct {
	Applied, Duplicates, DeadLetters, Batches, Events, Retries, Stale atomic.Int64
	Parked                                                            atomic.Int64 // events waiting now
}

// New returns a writer applying events through conn (use NewConn so that rejected events
// do not open go-zero's breaker) and dead-lettering through dead. c comes from go-zero's
// config loader (a Conf built in code passes through conf.FillDefault first).
func New(c Conf, conn sqlx.SqlConn, dead kafkax.Sender) *Writer {
	ctx, cancel := context.WithCancel(context.Background())
	return &Writer{c: c, conn: conn, models: newModels(conn), dead: dead, reqs: make(chan *request, 4*c.MaxBatch),
		ctx: ctx, cancel: cancel, stopped: make(chan struct{})}
}

// Consume is a blocking handler (kq's shape; tools and tests). It returns nil only once
// the event is committed in MySQL or, for a poison event, acknowledged by the dead-letter
// topic.
func (w *Writer) Consume(ctx context.Context, key, value string) error {
	ch := make(chan error, 1)
	w.Submit(ctx, key, value, func(err error) { ch <- err })
	return <-ch
}

// Stopped is closed once the writer has stopped.
func (w *Writer) Stopped() <-chan struct{} { return w.stopped }

// Stop stops the flusher. Queued and parked events are answered ErrStopped (not applied,
// not committed: stop the Kafka consumer first).
func (w *Writer) Stop() {
	w.once.Do(func() {
		w.cancel()
		if w.started.CompareAndSwap(false, true) { // never started: it never will
			close(w.stopped)
		} else {
			<-w.stopped
		}
	})
}

// Apply applies events in one transaction, synchronously (tools and tests; the service
// goes through Consume).
func (w *Writer) Apply(evs ...event.Event) error {
	batch := make([]*request, len(evs))
	for i, ev := range evs {
		batch[i] = &request{ev: ev}
	}
	res, err := w.apply(batch)
	if err == nil {
		w.record(batch, res)
	}
	return err
}

// sleep waits d; false when the writer stopped meanwhile.
func (w *Writer) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// models are the tables the writer changes.
type models struct {
	orders      model.SeckillOrderModel
	adjustments model.StockAdjustmentModel
	inventory   model.InventoryModel
	activities  model.ActivityModel
	entries     model.DrawEntryModel
}

func newModels(conn sqlx.SqlConn) models {
	return models{orders: model.NewSeckillOrderModel(conn), adjustments: model.NewStockAdjustmentModel(conn),
		inventory: model.NewInventoryModel(conn), activities: model.NewActivityModel(conn),
		entries: model.NewDrawEntryModel(conn)}
}
