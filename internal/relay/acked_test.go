package relay_test

import (
	"context"
	"time"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/relay"
	"github.com/seckill/seckill/internal/stock"
)

// acked runs each change as the inventory service's Redis book does (rpc/internal/book.Redis),
// without its degrade fence: the script (a Store built WithEntries), then the outbox entries
// its answer waits on through the Acker, a call's at once.
type acked struct {
	store *stock.Store
	acker *relay.Acker
}

func (a acked) ReserveBatch(ctx context.Context, aid int64, items []domain.ReserveItem,
	sellBy time.Time) ([]stock.ReserveResult, error) {
	res, err := a.store.ReserveBatch(ctx, aid, items, sellBy)
	if err != nil {
		return nil, err
	}
	es, waiting := stock.Awaited(res)
	if len(es) == 0 {
		return res, nil
	}
	for k, err := range a.acker.AckBatch(ctx, es) {
		for _, i := range waiting[k] {
			if err != nil && res[i].Err == nil {
				res[i] = stock.ReserveResult{Err: err}
			}
		}
	}
	return res, nil
}

func (a acked) Reserve(ctx context.Context, aid, uid, qty int64, requestID string) (domain.Reservation, error) {
	res, err := a.ReserveBatch(ctx, aid, []domain.ReserveItem{{UID: uid, Qty: qty, RequestID: requestID}}, time.Time{})
	if err != nil {
		return domain.Reservation{}, err
	}
	return res[0].Reservation, res[0].Err
}

func (a acked) Confirm(ctx context.Context, orderNo string, uid int64) error {
	es, err := a.store.Confirm(ctx, orderNo, uid)
	return a.answer(ctx, es, err)
}

func (a acked) Release(ctx context.Context, orderNo string, uid int64, target string) error {
	es, err := a.store.Release(ctx, orderNo, uid, target)
	return a.answer(ctx, es, err)
}

func (a acked) Adjust(ctx context.Context, aid, delta int64) (domain.Counters, error) {
	c, es, err := a.store.Adjust(ctx, aid, delta, "", "")
	return c, a.answer(ctx, es, err)
}

// answer is a change's answer: its script's error, else its entries' acknowledgement.
func (a acked) answer(ctx context.Context, es []stock.Entry, err error) error {
	if err != nil || len(es) == 0 {
		return err
	}
	for _, err := range a.acker.AckBatch(ctx, es) {
		if err != nil {
			return err
		}
	}
	return nil
}
