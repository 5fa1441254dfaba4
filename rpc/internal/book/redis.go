package book

import (
	"context"
	"time"

	"github.com/seckill/seckill/internal/stock"
)

// Redis is the Redis book: stock.Store's scripts, selling nothing past SellBy (zero: no limit).
type Redis struct {
	Store  *stock.Store
	SellBy time.Time
}

// Reserve reserves qty of activity aid for uid, idempotent per request id.
func (r Redis) Reserve(ctx context.Context, aid, uid, qty int64, requestID string) (stock.Reservation, error) {
	return r.Store.ReserveBy(ctx, aid, uid, qty, requestID, r.SellBy)
}

// ReserveBatch reserves items of activity aid in order, each answered as Reserve would.
func (r Redis) ReserveBatch(ctx context.Context, aid int64, items []stock.ReserveItem) ([]stock.ReserveResult, error) {
	return r.Store.ReserveBatch(ctx, aid, items, r.SellBy)
}

// Confirm pays a reserved order of uid.
func (r Redis) Confirm(ctx context.Context, orderNo string, uid int64) error {
	return r.Store.Confirm(ctx, orderNo, uid)
}

// Pay confirms an order as the payment provider's payment p.
func (r Redis) Pay(ctx context.Context, orderNo string, p stock.Payment) error {
	return r.Store.Pay(ctx, orderNo, p)
}

// Release moves a reserved order of uid to target.
func (r Redis) Release(ctx context.Context, orderNo string, uid int64, target string) error {
	return r.Store.Release(ctx, orderNo, uid, target)
}

// ExpireDue expires up to limit reserved orders of activity aid past their expire_at.
func (r Redis) ExpireDue(ctx context.Context, aid int64, limit int) ([]string, error) {
	return r.Store.ExpireDue(ctx, aid, limit)
}
