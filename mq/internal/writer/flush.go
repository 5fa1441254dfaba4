package writer

import (
	"context"
	"time"

	"github.com/zeromicro/go-zero/core/logx"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
)

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
