package book

import (
	"context"
	"slices"
	"time"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/internal/degrade"
)

// An Acker answers whether the changes that wrote the outbox entries es (one activity's) may
// be acknowledged: errs[i] is nil once es[i] is in Kafka and its stock hash still of its epoch
// (relay.Acker; docs/DESIGN.md, "Acknowledged only once in Kafka").
type Acker interface {
	AckBatch(ctx context.Context, es []stock.Entry) (errs []error)
}

// Redis is the Redis book. Every change runs three steps, in this order: its script
// (stock.Store), then, with an Acker, its outbox entries produced to Kafka and their epoch
// checked (Acker), then the fence asked whether the Redis book still sells (Fence). Without
// an Acker (Relay.Acknowledge: redis, or no relay) a change is answered once Redis holds it,
// and the relay alone produces its entry.
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
