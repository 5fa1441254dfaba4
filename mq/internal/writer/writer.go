// Package writer applies stock-change events to MySQL, the book of record: idempotent and
// independent of arrival order (event.Transition), several events per transaction
// (group commit), and a Kafka handler that returns only after its event's transaction
// committed, so kq never commits the offset of an event that is not in MySQL.
package writer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
)

// ErrStopped is returned to a handler whose event was not applied because the writer
// stopped; the message is not committed (the consumer is closed first) and comes again.
var ErrStopped = errors.New("writer: stopped")

// Conf tunes the writer.
type Conf struct {
	// MaxBatch is the most events in one transaction; 1 is one transaction per event.
	MaxBatch int `json:",default=256,range=[1:10000]"`
	// PoisonAfter: an event MySQL keeps rejecting as invalid (an UNSIGNED underflow) is
	// retried this long, in case the events that precede it are still on their way (they
	// may be in another partition), then dead-lettered.
	PoisonAfter time.Duration `json:",default=30s"`
	// RetryMax caps the backoff between retries of a transient failure (MySQL down).
	RetryMax time.Duration `json:",default=5s"`
	// TxTimeout bounds one transaction.
	TxTimeout time.Duration `json:",default=10s"`
}

// Stats are the writer's counters (also exported as Prometheus metrics).
type Stats struct {
	Applied, Duplicates, DeadLetters, Batches, Events, Retries atomic.Int64
}

// Writer is the Kafka handler (kq.ConsumeHandler) and the group-commit flusher. Start runs
// the flusher (blocking, a service.Service); Stop stops it.
type Writer struct {
	c     Conf
	conn  sqlx.SqlConn
	dead  kafkax.Sender
	reqs  chan *request
	Stats Stats

	ctx     context.Context
	cancel  context.CancelFunc
	stopped chan struct{}
	once    sync.Once
	started atomic.Bool
}

type request struct {
	ev   event.Event
	raw  string
	done chan error // nil: committed; *poisonError: to be dead-lettered; ErrStopped

	poisonSince time.Time
}

// poisonError is an event MySQL rejects however often it is tried.
type poisonError struct{ reason string }

func (e *poisonError) Error() string { return "poison event: " + e.reason }

// New returns a writer applying events through conn (use NewConn so that rejected events
// do not open go-zero's breaker) and dead-lettering through dead.
func New(c Conf, conn sqlx.SqlConn, dead kafkax.Sender) *Writer {
	if c.MaxBatch < 1 {
		c.MaxBatch = 256
	}
	if c.PoisonAfter <= 0 {
		c.PoisonAfter = 30 * time.Second
	}
	if c.RetryMax <= 0 {
		c.RetryMax = 5 * time.Second
	}
	if c.TxTimeout <= 0 {
		c.TxTimeout = 10 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Writer{c: c, conn: conn, dead: dead, reqs: make(chan *request, 4*c.MaxBatch),
		ctx: ctx, cancel: cancel, stopped: make(chan struct{})}
}

// NewConn opens MySQL for the writer: go-zero's sqlx breaker must not count rejected
// (poison) events as failures, or a burst of them would fail healthy transactions.
func NewConn(dsn string) sqlx.SqlConn {
	return sqlx.NewMysql(dsn, sqlx.WithAcceptable(isRejected))
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

// Consume is the kq handler. It returns nil only once the event is committed in MySQL or,
// for a poison event, acknowledged by the dead-letter topic.
func (w *Writer) Consume(_ context.Context, key, value string) error {
	ev, err := event.Unmarshal([]byte(value))
	if err != nil {
		return w.deadLetter(key, value, "", "malformed", err.Error())
	}
	r := &request{ev: ev, raw: value, done: make(chan error, 1)}
	select {
	case w.reqs <- r:
	case <-w.stopped:
		return ErrStopped
	}
	select {
	case err = <-r.done:
	case <-w.stopped:
		select {
		case err = <-r.done:
		default:
			return ErrStopped
		}
	}
	var pe *poisonError
	if errors.As(err, &pe) {
		return w.deadLetter(key, value, ev.EventID, "rejected", pe.reason)
	}
	return err
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

// Start runs the flusher until Stop: it takes every event queued (up to MaxBatch), applies
// them in one transaction, then releases their handlers.
func (w *Writer) Start() {
	w.started.Store(true)
	defer close(w.stopped)
	var parked []*request
	defer func() {
		for _, r := range parked {
			r.done <- ErrStopped
		}
		metricParked.Set(0)
	}()
	retryParked := time.NewTicker(200 * time.Millisecond)
	defer retryParked.Stop()
	for {
		var batch []*request
		select {
		case <-w.ctx.Done():
			return
		case r := <-w.reqs:
			batch = append(batch, r)
		case <-retryParked.C:
		}
	drain:
		for len(batch) < w.c.MaxBatch {
			select {
			case r := <-w.reqs:
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
		}
	}
}

// Stopped is closed once the writer has stopped.
func (w *Writer) Stopped() <-chan struct{} { return w.stopped }

// Stop stops the flusher. Queued and parked events are answered ErrStopped (not applied,
// not committed: stop the Kafka consumer first).
func (w *Writer) Stop() {
	w.once.Do(func() {
		w.cancel()
		if w.started.Load() {
			<-w.stopped
		} else {
			close(w.stopped)
		}
	})
}

// flush applies batch in one transaction and answers every request in it, except those
// MySQL rejects for less than PoisonAfter: those are returned, parked, to be tried again.
func (w *Writer) flush(batch []*request) (parked []*request) {
	for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, w.c.RetryMax) {
		res, err := w.apply(batch)
		if err == nil {
			w.record(batch, res)
			for _, r := range batch {
				r.done <- nil
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
			if time.Since(r.poisonSince) < w.c.PoisonAfter {
				return batch
			}
			r.done <- &poisonError{reason: err.Error()}
			return nil
		}
		w.Stats.Retries.Add(1)
		metricRetries.Inc()
		logx.Errorf("writer: transaction of %d events failed, retrying in %v: %v", len(batch), backoff, err)
		if !w.sleep(backoff) {
			for _, r := range batch {
				r.done <- ErrStopped
			}
			return nil
		}
	}
}

// outcome counts what a transaction did.
type outcome struct {
	applied    map[event.Type]int
	duplicates int
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

// invDelta is an activity's aggregated inventory change in one transaction, positive and
// negative parts apart so that the SQL adds before it subtracts: a batch whose net effect
// is valid never underflows in between.
type invDelta struct {
	availPlus, availMinus, lockedPlus, lockedMinus, soldPlus, soldMinus int64
	total                                                               int64
}

func (d *invDelta) add(x event.Delta) {
	split := func(v int64, plus, minus *int64) {
		if v > 0 {
			*plus += v
		} else {
			*minus -= v
		}
	}
	split(x.Available, &d.availPlus, &d.availMinus)
	split(x.Locked, &d.lockedPlus, &d.lockedMinus)
	split(x.Sold, &d.soldPlus, &d.soldMinus)
}

func (d *invDelta) zero() bool {
	return d.availPlus == d.availMinus && d.lockedPlus == d.lockedMinus && d.soldPlus == d.soldMinus
}

// apply runs one transaction for the batch: order rows moved by the transition table,
// adjustments recorded once per event_id, inventory changed once per activity.
func (w *Writer) apply(batch []*request) (outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), w.c.TxTimeout)
	defer cancel()
	var res outcome
	err := w.conn.TransactCtx(ctx, func(ctx context.Context, s sqlx.Session) error {
		res = outcome{applied: map[event.Type]int{}}
		inv := map[int64]*invDelta{}
		invOf := func(aid int64) *invDelta {
			if inv[aid] == nil {
				inv[aid] = &invDelta{}
			}
			return inv[aid]
		}

		// Orders: lock the rows that exist, move each through the table in memory.
		var orderNos []string
		seen := map[string]bool{}
		for _, r := range batch {
			if r.ev.Type != event.Adjusted && !seen[r.ev.OrderNo] {
				seen[r.ev.OrderNo] = true
				orderNos = append(orderNos, r.ev.OrderNo)
			}
		}
		state := map[string]string{}
		existing := map[string]bool{}
		if len(orderNos) > 0 {
			var rows []struct {
				OrderNo string `db:"order_no"`
				Status  string `db:"status"`
			}
			q := "SELECT `order_no`, `status` FROM `seckill_order` WHERE `order_no` IN (" +
				placeholders(len(orderNos)) + ") FOR UPDATE"
			if err := s.QueryRowsCtx(ctx, &rows, q, anys(orderNos)...); err != nil {
				return err
			}
			for _, row := range rows {
				state[row.OrderNo] = row.Status
				existing[row.OrderNo] = true
			}
		}
		created := map[string]*event.Event{} // new rows, by order_no, with their final status
		var createdOrder []string
		for _, r := range batch {
			ev := r.ev
			if ev.Type == event.Adjusted {
				continue
			}
			next, d, changed := event.Transition(state[ev.OrderNo], ev.Type, ev.Quantity)
			if !changed {
				res.duplicates++
				continue
			}
			res.applied[ev.Type]++
			state[ev.OrderNo] = next
			invOf(ev.ActivityID).add(d)
			if !existing[ev.OrderNo] {
				if created[ev.OrderNo] == nil {
					e := ev
					created[ev.OrderNo] = &e
					createdOrder = append(createdOrder, ev.OrderNo)
				}
			}
		}
		if len(createdOrder) > 0 {
			var sb strings.Builder
			sb.WriteString("INSERT INTO `seckill_order` (`order_no`, `request_id`, `activity_id`, `uid`, " +
				"`quantity`, `status`, `expire_at`, `placed_at`) VALUES ")
			args := make([]any, 0, 8*len(createdOrder))
			for i, ono := range createdOrder {
				if i > 0 {
					sb.WriteString(", ")
				}
				sb.WriteString("(?, ?, ?, ?, ?, ?, ?, ?)")
				e := created[ono]
				placed := e.CreatedMs
				if placed == 0 {
					placed = e.AtMs
				}
				args = append(args, ono, e.RequestID, e.ActivityID, e.UID, e.Quantity, state[ono],
					e.ExpireMs/1000, placed/1000)
			}
			if _, err := s.ExecCtx(ctx, sb.String(), args...); err != nil {
				return err
			}
		}
		byStatus := map[string][]string{}
		for _, ono := range orderNos {
			if existing[ono] && created[ono] == nil {
				byStatus[state[ono]] = append(byStatus[state[ono]], ono)
			}
		}
		for st, onos := range byStatus {
			q := "UPDATE `seckill_order` SET `status` = ? WHERE `status` <> ? AND `order_no` IN (" +
				placeholders(len(onos)) + ")"
			if _, err := s.ExecCtx(ctx, q, append([]any{st, st}, anys(onos)...)...); err != nil {
				return err
			}
		}

		// Adjustments: once per event_id.
		for _, r := range batch {
			ev := r.ev
			if ev.Type != event.Adjusted {
				continue
			}
			result, err := s.ExecCtx(ctx, "INSERT IGNORE INTO `stock_adjustment` (`event_id`, `activity_id`, `delta`) "+
				"VALUES (?, ?, ?)", ev.EventID, ev.ActivityID, ev.Delta)
			if err != nil {
				return err
			}
			if n, err := result.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				res.duplicates++
				continue
			}
			res.applied[event.Adjusted]++
			d := invOf(ev.ActivityID)
			d.add(event.Delta{Available: ev.Delta})
			d.total += ev.Delta
		}

		// Inventory: one statement per activity, adding before subtracting.
		for aid, d := range inv {
			if !d.zero() {
				result, err := s.ExecCtx(ctx, "UPDATE `inventory` SET "+
					"`available` = `available` + ? - ?, `locked` = `locked` + ? - ?, `sold` = `sold` + ? - ? "+
					"WHERE `activity_id` = ?", d.availPlus, d.availMinus, d.lockedPlus, d.lockedMinus,
					d.soldPlus, d.soldMinus, aid)
				if err != nil {
					return err
				}
				if n, err := result.RowsAffected(); err != nil {
					return err
				} else if n == 0 {
					return &poisonError{reason: fmt.Sprintf("no inventory row for activity %d", aid)}
				}
			}
			if d.total != 0 {
				// activity.total follows adjustments, so available+locked+sold == total holds
				// in MySQL as it does in Redis.
				plus, minus := max(d.total, 0), max(-d.total, 0)
				if _, err := s.ExecCtx(ctx, "UPDATE `activity` SET `total` = `total` + ? - ? WHERE `id` = ?",
					plus, minus, aid); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return res, err
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
