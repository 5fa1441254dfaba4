// Package writer applies stock-change events to MySQL, the book of record: idempotent and
// independent of arrival order (event.Transition), up to MaxBatch events per transaction
// (group commit), answering each event (Submit's done) only after its transaction
// committed, so the consumer never commits the offset of an event that is not in MySQL.
package writer

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/sqlx"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/mysqlx"
)

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

// New returns a writer applying events through conn (use NewConn so that rejected events
// do not open go-zero's breaker) and dead-lettering through dead. c comes from go-zero's
// config loader (a Conf built in code passes through conf.FillDefault first).
func New(c Conf, conn sqlx.SqlConn, dead kafkax.Sender) *Writer {
	ctx, cancel := context.WithCancel(context.Background())
	return &Writer{c: c, conn: conn, models: newModels(conn), dead: dead, reqs: make(chan *request, 4*c.MaxBatch),
		ctx: ctx, cancel: cancel, stopped: make(chan struct{})}
}

// NewConn opens MySQL for the writer: go-zero's sqlx breaker must not count rejected
// (poison) events as failures, or a burst of them would fail healthy transactions.
func NewConn(dsn string) sqlx.SqlConn {
	return mysqlx.Open(dsn, sqlx.WithAcceptable(isRejected))
}

// isRejected reports MySQL errors that mean "this data can never be applied": retrying
// the same event cannot help (unless the events before it arrive).
func isRejected(err error) bool {
	var pe *poisonError
	if errors.As(err, &pe) {
		return true
	}
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	switch me.Number {
	case 1690, // BIGINT UNSIGNED value is out of range (MariaDB's underflow)
		1264, // out of range value for column (MySQL)
		1406, // data too long
		1366, // incorrect value
		1048: // column cannot be null
		return true
	}
	return false
}

// Consume is a blocking handler (kq's shape; tools and tests). It returns nil only once
// the event is committed in MySQL or, for a poison event, acknowledged by the dead-letter
// topic.
func (w *Writer) Consume(ctx context.Context, key, value string) error {
	ch := make(chan error, 1)
	w.Submit(ctx, key, value, func(err error) { ch <- err })
	return <-ch
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

// Reject dead-letters a message that must not be applied (a forged event: why says how);
// done is called once, as for Submit.
func (w *Writer) Reject(key, value, why string, done func(error)) {
	go func() { done(w.deadLetter(key, value, "", "forged", why)) }()
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

// awaitEvery is how often a parked event past PoisonAfter asks Awaited again; at most
// checksPerRound are asked per round of the flusher (each is a few round trips to Redis
// and Kafka, made by the flusher), the others wait for a later round.
const (
	awaitEvery     = time.Second
	checksPerRound = 16
)

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

// poisonError is an event MySQL rejects however often it is tried.
type poisonError struct{ reason string }

func (e *poisonError) Error() string { return "poison event: " + e.reason }

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

// nothingAwaited reports whether r, rejected past PoisonAfter, may be dead-lettered: Awaited
// answered false and r was rejected again after every request submitted by then was tried.
func (w *Writer) nothingAwaited(r *request) bool {
	if w.Awaited == nil {
		return true
	}
	if r.cleared {
		return w.taken >= r.clearedAt
	}
	if now := time.Now(); now.Before(r.nextCheck) || w.checks <= 0 {
		return false
	} else {
		r.nextCheck = now.Add(awaitEvery)
	}
	w.checks--
	ctx, cancel := context.WithTimeout(w.ctx, 5*time.Second)
	defer cancel()
	awaited, err := w.Awaited(ctx, r.ev)
	if err != nil {
		if w.ctx.Err() == nil {
			logx.Errorf("writer: event %s parked past %v: cannot tell whether what it waits for can still arrive, "+
				"it stays parked: %v",
				r.ev.EventID, w.c.PoisonAfter, err)
		}
		return false
	}
	if awaited {
		return false
	}
	// Read after Awaited: whatever it saw handed to this writer was submitted by now. r is
	// tried once more, in a later round, before it is dead-lettered.
	r.cleared, r.clearedAt = true, w.submitted.Load()
	return false
}

// deadLetter sends the message to the dead-letter topic, retrying until Kafka takes it or
// the writer stops (then the message is not committed and comes again).
func (w *Writer) deadLetter(key, value, eventID, kind, reason string) error {
	msg := kafkax.DeadLetter{Source: kafkax.SourceWriter, Reason: kind + ": " + reason, Key: key,
		Payload: value, EntryID: eventID}.Message()
	for backoff := 100 * time.Millisecond; ; backoff = min(2*backoff, w.c.RetryMax) {
		err := w.dead.Send(w.ctx, msg)
		if err == nil {
			w.Stats.DeadLetters.Add(1)
			metricDeadLetters.WithLabelValues(kind).Inc()
			logx.Errorf("writer: dead-lettered event %q (key %s): %s: %s", eventID, key, kind, reason)
			return nil
		}
		logx.Errorf("writer: dead-letter topic: %v; retrying in %v", err, backoff)
		if !w.sleep(backoff) {
			return ErrStopped
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
