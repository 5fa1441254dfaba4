package writer

import (
	"context"
	"errors"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/mysqlx"
)

// An event MySQL rejects (a poison event, isRejected): parked and tried again while the
// events it may wait for can still arrive (nothingAwaited), then dead-lettered (deadLetter).

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

// Reject dead-letters a message that must not be applied (a forged event: why says how);
// done is called once, as for Submit.
func (w *Writer) Reject(key, value, why string, done func(error)) {
	go func() { done(w.deadLetter(key, value, "", "forged", why)) }()
}

// awaitEvery is how often a parked event past PoisonAfter asks Awaited again; at most
// checksPerRound are asked per round of the flusher (each is a few round trips to Redis
// and Kafka, made by the flusher), the others wait for a later round.
const (
	awaitEvery     = time.Second
	checksPerRound = 16
)

// poisonError is an event MySQL rejects however often it is tried.
type poisonError struct{ reason string }

func (e *poisonError) Error() string { return "poison event: " + e.reason }

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
