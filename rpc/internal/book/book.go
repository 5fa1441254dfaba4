// Package book is the inventory's books behind one interface: the Redis book (stock.Store's
// scripts), the MySQL book (degrade mode) and the Router that chooses between them per call.
// This file is a Redis reservation's way through the package: the Router, then the Redis
// book's steps (docs/DESIGN.md, "A reservation's path"); mysql.go is degrade mode's book
// (docs/DESIGN.md, "Degrade mode").
package book

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/internal/degrade"
)

// A Book reserves stock and moves orders through their states, with the answers of docs/DESIGN.md's scripts.
type Book interface {
	Reserve(ctx context.Context, aid, uid, qty int64, requestID string) (domain.Reservation, error)
	// ReserveBatch reserves items of activity aid in order, each answered as Reserve would;
	// err fails the whole batch.
	ReserveBatch(ctx context.Context, aid int64, items []domain.ReserveItem) ([]stock.ReserveResult, error)
	Confirm(ctx context.Context, orderNo string, uid int64) error
	// Pay confirms an order as the payment provider's payment p: the same change as Confirm,
	// with the amount checked and the trade_no kept with the order.
	Pay(ctx context.Context, orderNo string, p domain.Payment) error
	// Release moves a reserved order of uid to target (domain.StateCancelled or domain.StateExpired).
	Release(ctx context.Context, orderNo string, uid int64, target string) error
	ExpireDue(ctx context.Context, aid int64, limit int) ([]string, error)
}

// A Router is the Book the RPCs use: it serves each call from the book the fence chooses,
// backfills a Redis miss once and hands the Redis book's failures to the fence.
type Router struct {
	// Fence: degrade mode's (nil without degrade mode: every call goes to the Redis book, and
	// its failures are answered as they are).
	Fence *degrade.Fence
	// Redis is the Redis book, its SellBy set per call from the fence.
	Redis  Redis
	MySQL  *MySQL
	Loader degrade.Rebuilder
}

var _ Book = (*Router)(nil)

// Reserve reserves qty of activity aid for uid, idempotent per request id: a batch of one.
func (r *Router) Reserve(ctx context.Context, aid, uid, qty int64, requestID string) (domain.Reservation, error) {
	res, err := r.ReserveBatch(ctx, aid, []domain.ReserveItem{{UID: uid, Qty: qty, RequestID: requestID}})
	if err != nil {
		return domain.Reservation{}, err
	}
	return res[0].Reservation, res[0].Err
}

// ReserveBatch reserves items of activity aid in order, each answered as Reserve would.
func (r *Router) ReserveBatch(ctx context.Context, aid int64, items []domain.ReserveItem) (res []stock.ReserveResult,
	err error) {
	err = r.route(ctx, aid, false, func(b Book) (err error) {
		if m, ok := b.(*MySQL); ok && m == r.MySQL {
			if err := r.drawGuard(ctx, aid); err != nil {
				return err
			}
		}
		res, err = b.ReserveBatch(ctx, aid, items)
		return err
	})
	return res, err
}

// Confirm pays a reserved order of uid.
func (r *Router) Confirm(ctx context.Context, orderNo string, uid int64) error {
	aid, err := r.Redis.Store.CheckOrderNo(orderNo)
	if err != nil {
		return err
	}
	return r.route(ctx, aid, true, func(b Book) error { return b.Confirm(ctx, orderNo, uid) })
}

// Pay confirms an order as the payment provider's payment p.
func (r *Router) Pay(ctx context.Context, orderNo string, p domain.Payment) error {
	aid, err := r.Redis.Store.CheckOrderNo(orderNo)
	if err != nil {
		return err
	}
	return r.route(ctx, aid, true, func(b Book) error { return b.Pay(ctx, orderNo, p) })
}

// Release moves a reserved order of uid to target.
func (r *Router) Release(ctx context.Context, orderNo string, uid int64, target string) error {
	aid, err := r.Redis.Store.CheckOrderNo(orderNo)
	if err != nil {
		return err
	}
	return r.route(ctx, aid, true, func(b Book) error { return b.Release(ctx, orderNo, uid, target) })
}

// ExpireDue expires up to limit reserved orders of activity aid past their expire_at.
func (r *Router) ExpireDue(ctx context.Context, aid int64, limit int) (done []string, err error) {
	err = r.route(ctx, aid, false, func(b Book) (err error) {
		done, err = b.ExpireDue(ctx, aid, limit)
		return err
	})
	return done, err
}

// Adjust changes activity aid's sellable stock on the Redis book, whichever book the fence
// chooses: stock changes go through Redis alone, and reach MySQL as events like any other.
func (r *Router) Adjust(ctx context.Context, aid, delta int64, key, fp string) (domain.Counters, error) {
	return r.Redis.Adjust(ctx, aid, delta, key, fp)
}

// route runs call on the book the fence chooses for activity aid (the Redis book without
// a fence): on the Redis book a miss is backfilled and call run once more, and a failure is
// handed to the fence.
func (r *Router) route(ctx context.Context, aid int64, order bool, call func(Book) error) error {
	redis := r.Redis
	if r.Fence != nil {
		mysql, sellBy, err := r.Fence.Route(ctx, aid)
		if err != nil {
			return err
		}
		if mysql {
			return call(r.MySQL)
		}
		redis.SellBy = sellBy
	}
	err := call(redis)
	if errors.Is(err, stock.ErrNotWarm) {
		if err = r.Backfill(ctx, aid, order); err == nil {
			err = call(redis)
		}
	}
	if err != nil && r.Fence != nil {
		err = r.Fence.Failed(ctx, aid, err) // Redis down: degrade mode
	}
	return err
}

// Backfill loads activity aid into Redis when it is not there (a lost one is rebuilt, BUSY
// meanwhile); for a call on an order (order true) an unknown activity is ORDER_NOT_FOUND.
func (r *Router) Backfill(ctx context.Context, aid int64, order bool) error {
	_, err := r.Loader.Stock(ctx, aid)
	if order && xerr.CodeOf(err) == xerr.ActivityNotFound {
		return xerr.ErrOrderNotFound // an order of no activity
	}
	return err
}

// An Acker answers whether the changes that wrote the outbox entries es (one activity's) may
// be acknowledged: errs[i] is nil once es[i] is in Kafka and its stock hash still of its epoch
// (relay.Acker; docs/DESIGN.md, "Acknowledged only once in Kafka").
type Acker interface {
	AckBatch(ctx context.Context, es []stock.Entry) (errs []error)
}

// Redis is the Redis book. Every change runs three steps, in this order: its script
// (stock.Store), then, with an Acker, its outbox entries produced to Kafka and their epoch
// checked (Acker), then, in degrade mode, the fence asked whether the Redis book still sells
// (Fence). Without an Acker (Relay.Acknowledge: redis, or no relay) a change is answered once
// Redis holds it, and the relay alone produces its entry.
type Redis struct {
	Store *stock.Store // WithEntries when Acker is set
	Acker Acker
	Fence *degrade.Fence // nil: no degrade mode
	// SellBy: nothing is sold past it (zero: no limit; degrade mode's lease, set per call).
	SellBy time.Time
}

// errSwitched answers a change acknowledged while degrade mode switched the activity to MySQL.
var errSwitched = xerr.New(xerr.Busy, "switched to degrade mode, retry with the same request_id")

// Reserve reserves qty of activity aid for uid, idempotent per request id: a batch of one.
func (r Redis) Reserve(ctx context.Context, aid, uid, qty int64, requestID string) (domain.Reservation, error) {
	res, err := r.ReserveBatch(ctx, aid, []domain.ReserveItem{{UID: uid, Qty: qty, RequestID: requestID}})
	if err != nil {
		return domain.Reservation{}, err
	}
	return res[0].Reservation, res[0].Err
}

// answerMargin: a reservation's script sells nothing later than this before its call's
// deadline, so that no script still on its way (a partitioned link) sells after the caller
// was answered (docs/DESIGN.md, "Failure stance").
const answerMargin = 100 * time.Millisecond

// ReserveBatch reserves items of activity aid in order, each answered as Reserve would. The
// script sells nothing past the call's deadline (less answerMargin) or the fence's SellBy,
// whichever is first; a call that failed with its script perhaps still on its way is answered
// only once that sell-by has passed, so the answer (BUSY) is never contradicted by a late
// script and a retry with the same request id finds what is true from then on.
func (r Redis) ReserveBatch(ctx context.Context, aid int64, items []domain.ReserveItem) ([]stock.ReserveResult, error) {
	sellBy := r.sellBy(ctx)
	res, err := r.Store.ReserveBatch(ctx, aid, items, sellBy)
	if err != nil {
		if stock.Unsure(err) {
			waitPast(ctx, sellBy)
		}
		return nil, err
	}
	return r.settle(ctx, aid, res), nil
}

// sellBy is the earlier of the fence's SellBy and ctx's deadline less answerMargin (zero: neither).
func (r Redis) sellBy(ctx context.Context) time.Time {
	d, ok := ctx.Deadline()
	if !ok {
		return r.SellBy
	}
	if by := d.Add(-answerMargin); r.SellBy.IsZero() || by.Before(r.SellBy) {
		return by
	}
	return r.SellBy
}

// waitPast returns once t has passed (at once for a zero t) or ctx is done.
func waitPast(ctx context.Context, t time.Time) {
	d := time.Until(t)
	if t.IsZero() || d <= 0 {
		return
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-ctx.Done():
	}
}

// ServeDraw reserves the draw's entrants items of activity aid in order (stock.Store.ServeDraw).
func (r Redis) ServeDraw(ctx context.Context, aid int64, items []domain.ReserveItem) ([]stock.ReserveResult, error) {
	res, err := r.Store.ServeDraw(ctx, aid, items)
	if err != nil {
		return nil, err
	}
	return r.settle(ctx, aid, res), nil
}

// Confirm pays a reserved order of uid.
func (r Redis) Confirm(ctx context.Context, orderNo string, uid int64) error {
	es, err := r.Store.Confirm(ctx, orderNo, uid)
	return r.answer(ctx, es, err)
}

// Pay confirms an order as the payment provider's payment p.
func (r Redis) Pay(ctx context.Context, orderNo string, p domain.Payment) error {
	es, err := r.Store.Pay(ctx, orderNo, p)
	return r.answer(ctx, es, err)
}

// Release moves a reserved order of uid to target.
func (r Redis) Release(ctx context.Context, orderNo string, uid int64, target string) error {
	es, err := r.Store.Release(ctx, orderNo, uid, target)
	return r.answer(ctx, es, err)
}

// ExpireDue expires up to limit reserved orders of activity aid past their expire_at (nobody is
// answered for them: the relay produces their entries).
func (r Redis) ExpireDue(ctx context.Context, aid int64, limit int) ([]string, error) {
	return r.Store.ExpireDue(ctx, aid, limit)
}

// Adjust adds (delta > 0) or withdraws (delta < 0) activity aid's sellable stock under a
// merchant's idempotency key and fingerprint (stock.Store.AdjustOnce).
func (r Redis) Adjust(ctx context.Context, aid, delta int64, key, fp string) (domain.Counters, error) {
	c, es, err := r.Store.Adjust(ctx, aid, delta, key, fp)
	if err == nil {
		err = firstError(r.acknowledge(ctx, aid, es))
	}
	if err != nil {
		return domain.Counters{}, err
	}
	return c, nil
}

// answer is an order change's answer: its script's error, else its entries' acknowledgement.
func (r Redis) answer(ctx context.Context, es []stock.Entry, err error) error {
	if err != nil || len(es) == 0 {
		return err
	}
	return firstError(r.acknowledge(ctx, es[0].ActivityID, es))
}

// settle answers BUSY each item of res whose entries may not be acknowledged (its change
// staying made, for a retry to replay), the entries of the whole call acknowledged at once.
func (r Redis) settle(ctx context.Context, aid int64, res []stock.ReserveResult) []stock.ReserveResult {
	es, waiting := stock.Awaited(res)
	for k, err := range r.acknowledge(ctx, aid, es) {
		for _, i := range waiting[k] {
			if err != nil && res[i].Err == nil {
				res[i] = stock.ReserveResult{Err: err}
			}
		}
	}
	return res
}

// acknowledge runs the steps after the script for its entries es of activity aid: the Acker
// (Kafka, then the epoch check), then the fence. errs[i] is es[i]'s answer.
func (r Redis) acknowledge(ctx context.Context, aid int64, es []stock.Entry) []error {
	if r.Acker == nil || len(es) == 0 {
		return make([]error, len(es))
	}
	errs := r.Acker.AckBatch(ctx, es)
	if !slices.Contains(errs, nil) {
		return errs
	}
	// In Kafka before this check, so the MySQL book, selling only after the writer consumed
	// what Kafka held at its switch, sees the change (docs/DESIGN.md, "Degrade mode").
	var err error
	if r.Fence != nil {
		var mysql bool
		if mysql, _, err = r.Fence.Route(ctx, aid); err == nil && mysql {
			err = errSwitched
		}
	}
	for i := range errs {
		if errs[i] == nil {
			errs[i] = err
		}
	}
	return errs
}

// firstError is the first non-nil of errs.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
