// Package writer applies stock-change events to MySQL, the book of record: idempotent and
// independent of arrival order (event.Transition), up to MaxBatch events per transaction
// (group commit), answering each event (Submit's done) only after its transaction
// committed, so the consumer never commits the offset of an event that is not in MySQL.
// This file is an event's way, from Submit through the flusher to its transaction (txn);
// poison.go is what happens to an event MySQL rejects, lifecycle.go the writer's
// configuration, construction and stop.
package writer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/sqlx"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/model"
)

// Writer is the consumer's handler (Submit; Consume blocks) and the group-commit flusher. Start runs
// the flusher (blocking, a service.Service); Stop stops it.
type Writer struct {
	c      Conf
	conn   sqlx.SqlConn
	models models
	dead   kafkax.Sender
	reqs   chan *request
	Stats  Stats

	// Awaited, when set (before Start), tells whether an event that ev may be waiting for
	// can still arrive (see Submit): a rejected event older than PoisonAfter is
	// dead-lettered only once it answers false, never while it answers true or fails.
	// Nil: dead-lettered after PoisonAfter.
	Awaited func(ctx context.Context, ev event.Event) (bool, error)

	ctx     context.Context
	cancel  context.CancelFunc
	stopped chan struct{}
	once    sync.Once
	started atomic.Bool

	// submitMu makes submitted the number of requests in reqs' order: the first submitted
	// requests queued are exactly those counted.
	submitMu  sync.Mutex
	submitted atomic.Int64
	taken     int64 // requests the flusher has taken from reqs (flusher only)
	checks    int   // Awaited calls left in this round of the flusher (flusher only)
}

// Submit hands one message to the writer, blocking only while its queue is full: done is called
// once, with nil once the event is committed (or dead-lettered), else with why not (ErrStopped).
// The transaction that applies it runs under ctx's span, when it is sampled, or links to it
// (startApply).
func (w *Writer) Submit(ctx context.Context, key, value string, done func(error)) {
	ev, err := event.Unmarshal([]byte(value))
	if err != nil {
		go func() { done(w.deadLetter(key, value, "", "malformed", err.Error())) }()
		return
	}
	r := &request{ev: ev, raw: value, trace: oteltrace.SpanContextFromContext(ctx)}
	r.done = func(err error) {
		var pe *poisonError
		if errors.As(err, &pe) {
			go func() { done(w.deadLetter(key, value, ev.EventID, "rejected", pe.reason)) }()
			return
		}
		done(err)
	}
	w.submitMu.Lock()
	select {
	case w.reqs <- r:
		w.submitted.Add(1)
		w.submitMu.Unlock()
	case <-w.stopped:
		w.submitMu.Unlock()
		done(ErrStopped)
	}
}

type request struct {
	ev    event.Event
	raw   string
	trace oteltrace.SpanContext // of the request that made the change (invalid: not traced)
	// done is called once: nil committed; *poisonError to be dead-lettered; ErrStopped.
	done func(error)

	poisonSince time.Time
	nextCheck   time.Time // next time Awaited may be asked
	// cleared: Awaited answered false once; clearedAt is how many requests had been
	// submitted then. The event is dead-lettered when it is rejected again after the
	// flusher has tried all of those (one of them may be the event it waited for, handed
	// over but not yet tried when Awaited looked).
	cleared   bool
	clearedAt int64
}

// Start runs the flusher until Stop: it takes every event queued (up to MaxBatch), applies
// them in one transaction, then releases their handlers.
func (w *Writer) Start() {
	if !w.started.CompareAndSwap(false, true) {
		return // stopped before it started (or started twice)
	}
	defer close(w.stopped)
	var parked []*request
	defer func() {
		for _, r := range parked {
			r.done(ErrStopped)
		}
		metricParked.Set(0)
		for { // queued, never taken
			select {
			case r := <-w.reqs:
				r.done(ErrStopped)
			default:
				return
			}
		}
	}()
	retryParked := time.NewTicker(200 * time.Millisecond)
	defer retryParked.Stop()
	for {
		w.checks = checksPerRound
		var batch []*request
		select {
		case <-w.ctx.Done():
			return
		case r := <-w.reqs:
			w.taken++
			batch = append(batch, r)
		case <-retryParked.C:
		}
	drain:
		for len(batch) < w.c.MaxBatch {
			select {
			case r := <-w.reqs:
				w.taken++
				batch = append(batch, r)
			default:
				break drain
			}
		}
		if len(batch) > 0 {
			parked = append(parked, w.flush(batch)...)
		}
		if len(parked) > 0 && w.ctx.Err() == nil {
			// a parked event may be valid now that more events were applied
			var still []*request
			for _, r := range parked {
				still = append(still, w.flush([]*request{r})...)
			}
			parked = still
			metricParked.Set(float64(len(parked)))
			w.Stats.Parked.Store(int64(len(parked)))
		}
	}
}

// flush applies batch in one transaction and answers every request in it, except those
// MySQL rejects for less than PoisonAfter, or that may still be waiting for an event
// (nothingAwaited): those are returned, parked, to be tried again.
func (w *Writer) flush(batch []*request) (parked []*request) {
	for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, w.c.RetryMax) {
		began := time.Now()
		res, err := w.apply(batch)
		if err == nil {
			metricApplySeconds.Observe(time.Since(began).Seconds())
			w.record(batch, res)
			for _, r := range batch {
				r.done(nil)
			}
			return nil
		}
		if isRejected(err) {
			if len(batch) > 1 { // isolate the poison: one transaction per event
				for _, r := range batch {
					parked = append(parked, w.flush([]*request{r})...)
				}
				return parked
			}
			r := batch[0]
			if r.poisonSince.IsZero() {
				r.poisonSince = time.Now()
			}
			if time.Since(r.poisonSince) < w.c.PoisonAfter || !w.nothingAwaited(r) {
				return batch
			}
			r.done(&poisonError{reason: err.Error()})
			return nil
		}
		w.Stats.Retries.Add(1)
		metricRetries.Inc()
		logx.Errorf("writer: transaction of %d events failed, retrying in %v: %v", len(batch), backoff, err)
		if !w.sleep(backoff) {
			for _, r := range batch {
				r.done(ErrStopped)
			}
			return nil
		}
	}
}

// outcome counts what a transaction did.
type outcome struct {
	applied    map[event.Type]int
	duplicates int
	stale      int // changes of a replaced Redis book, dropped (see txn.dropStale)
}

func (w *Writer) record(batch []*request, res outcome) {
	w.Stats.Batches.Add(1)
	w.Stats.Events.Add(int64(len(batch)))
	metricBatchSize.Observe(float64(len(batch)))
	for t, n := range res.applied {
		w.Stats.Applied.Add(int64(n))
		metricApplied.WithLabelValues(string(t)).Add(float64(n))
	}
	w.Stats.Duplicates.Add(int64(res.duplicates))
	metricDuplicates.Add(float64(res.duplicates))
	w.Stats.Stale.Add(int64(res.stale))
	metricStale.Add(float64(res.stale))
}

// apply runs one transaction for the batch: order rows moved by the transition table,
// adjustments recorded once per event_id, inventory changed once per activity. When an
// event is sampled, the transaction runs in the span writer.apply (startApply).
func (w *Writer) apply(batch []*request) (res outcome, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), w.c.TxTimeout)
	defer cancel()
	ctx, span := startApply(ctx, batch)
	defer func() { event.EndSpan(span, err) }()
	err = w.conn.TransactCtx(ctx, func(ctx context.Context, s sqlx.Session) error {
		t := newTxn(ctx, s, w.models)
		err := t.run(batch)
		res = t.res
		return err
	})
	return res, err
}

// txn is one transaction of the writer: the order states it read and moved in memory,
// and the inventory changes it gathered, written once per activity at the end.
type txn struct {
	ctx context.Context
	s   sqlx.Session
	m   models
	res outcome

	orderNos []string          // the batch's orders, each once, in order of appearance
	state    map[string]string // order_no -> status: read from MySQL, then moved
	existing map[string]bool   // orders that have a row in MySQL
	created  []*model.SeckillOrder
	inv      map[int64]*invDelta // activity -> its change
	trades   map[string]string   // order_no -> the provider's trade_no its paid event carried
}

func newTxn(ctx context.Context, s sqlx.Session, m models) *txn {
	return &txn{ctx: ctx, s: s, m: m, res: outcome{applied: map[event.Type]int{}},
		existing: map[string]bool{}, inv: map[int64]*invDelta{}, trades: map[string]string{}}
}

// run is the transaction's steps, in the order of their statements.
func (t *txn) run(batch []*request) error {
	orders, adjustments, err := t.dropStale(split(batch))
	if err != nil {
		return err
	}
	if err := t.readStates(orders); err != nil {
		return err
	}
	t.transition(orders)
	if err := t.insertCreated(); err != nil {
		return err
	}
	if err := t.updateExisting(); err != nil {
		return err
	}
	if err := t.recordAdjustments(adjustments); err != nil {
		return err
	}
	return t.writeInventory()
}

// split separates order events from stock adjustments and draw entries, keeping their order.
func split(batch []*request) (orders, adjustments []event.Event) {
	for _, r := range batch {
		if r.ev.Type == event.Adjusted || r.ev.Type == event.Entered {
			adjustments = append(adjustments, r.ev)
		} else {
			orders = append(orders, r.ev)
		}
	}
	return orders, adjustments
}

// dropStale locks the inventory rows of the batch's activities, in activity order, and drops every
// change made under an epoch older than its activity's (0: no epoch, applied).
func (t *txn) dropStale(orders, adjustments []event.Event) ([]event.Event, []event.Event, error) {
	var aids []int64
	for _, evs := range [][]event.Event{orders, adjustments} {
		for _, ev := range evs {
			aids = append(aids, ev.ActivityID)
		}
	}
	slices.Sort(aids)
	epochs, err := t.m.inventory.FindEpochsForUpdate(t.ctx, t.s, slices.Compact(aids))
	if err != nil {
		return nil, nil, err
	}
	keep := func(evs []event.Event) []event.Event {
		out := evs[:0:0]
		for _, ev := range evs {
			if cur, ok := epochs[ev.ActivityID]; ok && ev.Epoch > 0 && ev.Epoch < cur {
				t.res.stale++
				logx.Infof("writer: event %s (%s %s of activity %d) of epoch %d dropped: the activity was rebuilt (epoch %d)",
					ev.EventID, ev.Type, ev.OrderNo, ev.ActivityID, ev.Epoch, cur)
				continue
			}
			out = append(out, ev)
		}
		return out
	}
	return keep(orders), keep(adjustments), nil
}

// readStates locks the order rows that exist and reads their status.
func (t *txn) readStates(orders []event.Event) error {
	seen := map[string]bool{}
	for _, ev := range orders {
		if !seen[ev.OrderNo] {
			seen[ev.OrderNo] = true
			t.orderNos = append(t.orderNos, ev.OrderNo)
		}
	}
	state, err := t.m.orders.FindStatusesForUpdate(t.ctx, t.s, t.orderNos)
	if err != nil {
		return err
	}
	t.state = state
	for ono := range state {
		t.existing[ono] = true
	}
	return nil
}

// transition moves each order through the table in memory: it counts what changes and
// what repeats, gathers the inventory deltas and notes the rows to create (with the first
// event of the order; the status is the final one).
func (t *txn) transition(orders []event.Event) {
	creating := map[string]bool{}
	for _, ev := range orders {
		next, d, changed := event.Transition(t.state[ev.OrderNo], ev.Type, ev.Quantity)
		if !changed {
			t.res.duplicates++
			continue
		}
		t.res.applied[ev.Type]++
		t.state[ev.OrderNo] = next
		if ev.Type == event.Paid && ev.TradeNo != "" {
			t.trades[ev.OrderNo] = ev.TradeNo
		}
		t.invOf(ev.ActivityID).Add(d.Available, d.Locked, d.Sold)
		if !t.existing[ev.OrderNo] && !creating[ev.OrderNo] {
			creating[ev.OrderNo] = true
			t.created = append(t.created, newOrder(ev))
		}
	}
}

// newOrder is the row of an order first seen in ev (its status is set at insert).
func newOrder(ev event.Event) *model.SeckillOrder {
	placed := ev.CreatedMs
	if placed == 0 {
		placed = ev.AtMs
	}
	return &model.SeckillOrder{OrderNo: ev.OrderNo, RequestId: ev.RequestID, ActivityId: uint64(ev.ActivityID),
		Uid: uint64(ev.UID), Quantity: uint64(ev.Quantity), ExpireAt: ev.ExpireMs / 1000, PlacedAt: placed / 1000}
}

// insertCreated inserts the new order rows in one statement, in their final status.
func (t *txn) insertCreated() error {
	for _, o := range t.created {
		o.Status, o.TradeNo = t.state[o.OrderNo], t.trades[o.OrderNo]
	}
	return t.m.orders.InsertBatch(t.ctx, t.s, t.created)
}

// updateExisting moves the existing rows to their new status, one statement per status.
func (t *txn) updateExisting() error {
	byStatus := map[string][]string{}
	for _, ono := range t.orderNos {
		if t.existing[ono] {
			byStatus[t.state[ono]] = append(byStatus[t.state[ono]], ono)
		}
	}
	for st, onos := range byStatus {
		if err := t.m.orders.SetStatus(t.ctx, t.s, st, onos); err != nil {
			return err
		}
	}
	// A provider's payment keeps its trade_no with the order: every existing order's in one
	// statement (one each made a batch of N payments N statements).
	trades := map[string]string{}
	for _, ono := range t.orderNos {
		if tn := t.trades[ono]; tn != "" && t.existing[ono] {
			trades[ono] = tn
		}
	}
	return t.m.orders.SetTradeNos(t.ctx, t.s, trades)
}

// recordAdjustments records each stock adjustment once per event_id; a new one changes
// available and the activity's total.
func (t *txn) recordAdjustments(adjustments []event.Event) error {
	for _, ev := range adjustments {
		if ev.Type == event.Entered {
			if err := t.recordEntry(ev); err != nil {
				return err
			}
			continue
		}
		inserted, err := t.m.adjustments.InsertIgnore(t.ctx, t.s, ev.EventID, ev.ActivityID, ev.Delta)
		if err != nil {
			return err
		}
		if !inserted {
			t.res.duplicates++
			continue
		}
		t.res.applied[event.Adjusted]++
		d := t.invOf(ev.ActivityID)
		d.Add(ev.Delta, 0, 0)
		d.total += ev.Delta
	}
	return nil
}

// writeInventory changes each activity's inventory in one statement (adding before
// subtracting), and its total when adjustments changed it, so available+locked+sold ==
// total holds in MySQL as it does in Redis.
func (t *txn) writeInventory() error {
	for aid, d := range t.inv {
		if !d.IsZero() {
			err := t.m.inventory.ApplyDelta(t.ctx, t.s, aid, d.InventoryDelta)
			if errors.Is(err, model.ErrNotFound) {
				return &poisonError{reason: fmt.Sprintf("no inventory row for activity %d", aid)}
			}
			if err != nil {
				return err
			}
		}
		if d.total != 0 {
			if err := t.m.activities.AddActivityTotal(t.ctx, t.s, aid, d.total); err != nil {
				return err
			}
		}
	}
	return nil
}

// invDelta is an activity's aggregated change in one transaction: its inventory, and its
// total (stock adjustments).
type invDelta struct {
	model.InventoryDelta
	total int64
}

func (t *txn) invOf(aid int64) *invDelta {
	if t.inv[aid] == nil {
		t.inv[aid] = &invDelta{}
	}
	return t.inv[aid]
}
