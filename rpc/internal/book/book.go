// Package book is the inventory's books behind one interface: the Redis book (stock.Store's
// scripts), the MySQL book (degrade mode) and the Router that chooses between them per call.
// docs/DESIGN.md, "Degrade mode".
package book

import (
	"context"
	"errors"

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

// route runs call on the book the fence chooses for activity aid: on the Redis book a miss
// is backfilled and call run once more, and a failure is handed to the fence.
func (r *Router) route(ctx context.Context, aid int64, order bool, call func(Book) error) error {
	mysql, sellBy, err := r.Fence.Route(ctx, aid)
	if err != nil {
		return err
	}
	if mysql {
		return call(r.MySQL)
	}
	redis := r.Redis
	redis.SellBy = sellBy
	err = call(redis)
	if errors.Is(err, stock.ErrNotWarm) {
		if err = r.Backfill(ctx, aid, order); err == nil {
			err = call(redis)
		}
	}
	if err != nil {
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
