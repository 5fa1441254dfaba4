package degrade

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/redis"
	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
)

// errFenced: the activity's mode changed under the MySQL path (no longer mysql).
var errFenced = xerr.New(xerr.Busy, "the activity is no longer in degrade mode, retry with the same request_id")

// modeLockSeconds is the lease of the lock that one instance holds while it hands an
// activity back to Redis.
const modeLockSeconds = 6

func formatID(aid int64) string { return strconv.FormatInt(aid, 10) }

// tx runs fn in one MySQL transaction that starts by locking the activity's inventory row
// and checking that its mode is mysql (the fence), under the activity's semaphore.
func (b *Book) tx(ctx context.Context, aid int64, fn func(ctx context.Context, s sqlx.Session) error) error {
	release, err := b.acquire(aid)
	if err != nil {
		return err
	}
	defer release()
	err = b.DB.TransactCtx(ctx, func(ctx context.Context, s sqlx.Session) error {
		mode, err := b.Inventory.LockMode(ctx, s, aid)
		if errors.Is(err, model.ErrNotFound) {
			return xerr.ErrActivityNotFound
		}
		if err != nil {
			return err
		}
		if mode != model.ModeMySQL {
			b.observe(aid, mode, time.Now())
			return errFenced
		}
		return fn(ctx, s)
	})
	return xerr.Unavailable(err)
}

// Reserve is the MySQL path's reservation, one transaction: the fence, a replay of the
// request id (the order as it is now), the window, the per-user limit (the buyer's
// reserved and paid orders), the conditional stock update, the order row.
func (b *Book) Reserve(ctx context.Context, aid, uid, qty int64, requestID string) (stock.Reservation, error) {
	for _, err := range []error{domain.CheckActivityID(aid), domain.CheckUID(uid), domain.CheckQuantity(qty),
		domain.CheckRequestID(requestID)} {
		if err != nil {
			return stock.Reservation{}, err
		}
	}
	act, err := b.Activities.FindOne(ctx, uint64(aid))
	if errors.Is(err, model.ErrNotFound) {
		return stock.Reservation{}, xerr.ErrActivityNotFound
	}
	if err != nil {
		return stock.Reservation{}, xerr.Unavailable(err)
	}
	var res stock.Reservation
	err = b.tx(ctx, aid, func(ctx context.Context, s sqlx.Session) error {
		o, err := b.Orders.FindByRequest(ctx, s, aid, uid, requestID)
		if err == nil {
			book, err := b.Inventory.FindBook(ctx, s, aid)
			if err != nil {
				return err
			}
			res = stock.Reservation{OrderNo: o.OrderNo, State: o.Status, Quantity: int64(o.Quantity),
				ExpireAt: o.ExpireAt * 1000, CreatedAt: o.PlacedAt * 1000, Remaining: int64(book.Available), Replay: true}
			return nil
		}
		if !errors.Is(err, model.ErrNotFound) {
			return err
		}
		nowMs := b.now().UnixMilli()
		if nowMs < act.StartTime*1000 {
			return xerr.ErrNotStarted
		}
		if nowMs >= act.EndTime*1000 {
			return xerr.ErrEnded
		}
		held, err := b.Orders.SumHeld(ctx, s, aid, uid)
		if err != nil {
			return err
		}
		if held+qty > int64(act.PerUserLimit) {
			return xerr.ErrLimitExceeded
		}
		ok, err := b.Inventory.TakeAvailable(ctx, s, aid, qty)
		if err != nil {
			return err
		}
		if !ok {
			return xerr.ErrSoldOut
		}
		expireAt := nowMs + int64(act.PayTimeoutSeconds)*1000
		orderNo := b.Store.NewOrderNo(aid)
		if err := b.Orders.InsertBatch(ctx, s, []*model.SeckillOrder{{OrderNo: orderNo, RequestId: requestID,
			ActivityId: uint64(aid), Uid: uint64(uid), Quantity: uint64(qty), Status: domain.StateReserved,
			ExpireAt: expireAt / 1000, PlacedAt: nowMs / 1000}}); err != nil {
			return err
		}
		book, err := b.Inventory.FindBook(ctx, s, aid)
		if err != nil {
			return err
		}
		res = stock.Reservation{OrderNo: orderNo, Quantity: qty, Remaining: int64(book.Available),
			ExpireAt: expireAt, CreatedAt: nowMs, State: domain.StateReserved}
		return nil
	})
	return res, err
}

// Confirm pays a reserved order of uid in MySQL (the Redis path's answers: paid again is
// no error; closed or past expire_at ORDER_CLOSED; another user's ORDER_NOT_FOUND).
func (b *Book) Confirm(ctx context.Context, orderNo string, uid int64) error {
	if uid < 1 {
		return xerr.New(xerr.InvalidArgument, "uid must be >= 1 (the order's owner)")
	}
	aid, err := b.Store.CheckOrderNo(orderNo)
	if err != nil {
		return err
	}
	return b.tx(ctx, aid, func(ctx context.Context, s sqlx.Session) error {
		o, err := b.owned(ctx, s, orderNo, uid)
		if err != nil {
			return err
		}
		switch o.Status {
		case domain.StatePaid:
			return nil
		case domain.StateReserved:
		default:
			return xerr.ErrOrderClosed
		}
		if b.now().UnixMilli() >= o.ExpireAt*1000 {
			return xerr.ErrOrderClosed // expiry is due: a pay and an expiry never both win
		}
		return b.move(ctx, s, aid, o, domain.StatePaid)
	})
}

// Release cancels (domain.StateCancelled) or expires (domain.StateExpired, only once due)
// a reserved order of uid in MySQL, with the Redis path's answers.
func (b *Book) Release(ctx context.Context, orderNo string, uid int64, target string) error {
	if uid < 1 {
		return xerr.New(xerr.InvalidArgument, "uid must be >= 1 (the order's owner)")
	}
	if target != domain.StateCancelled && target != domain.StateExpired {
		return xerr.Newf(xerr.InvalidArgument, "bad release target %q", target)
	}
	aid, err := b.Store.CheckOrderNo(orderNo)
	if err != nil {
		return err
	}
	return b.tx(ctx, aid, func(ctx context.Context, s sqlx.Session) error {
		o, err := b.owned(ctx, s, orderNo, uid)
		if err != nil {
			return err
		}
		switch o.Status {
		case target:
			return nil
		case domain.StatePaid:
			return xerr.ErrOrderPaid
		case domain.StateReserved:
		default:
			return xerr.ErrOrderClosed
		}
		if target == domain.StateExpired && b.now().UnixMilli() < o.ExpireAt*1000 {
			return xerr.New(xerr.NotDue, "the order is not due to expire")
		}
		return b.move(ctx, s, aid, o, target)
	})
}

// ExpireDue expires up to limit reserved orders of activity aid past their expire_at, in
// MySQL, one transaction each; it returns the orders it expired.
func (b *Book) ExpireDue(ctx context.Context, aid int64, limit int) ([]string, error) {
	due, err := b.Orders.FindDueReservedByActivity(ctx, aid, b.now().Unix()+1, limit)
	if err != nil {
		return nil, xerr.Unavailable(err)
	}
	var done []string
	for _, o := range due {
		err := b.Release(ctx, o.OrderNo, int64(o.Uid), domain.StateExpired)
		switch {
		case err == nil:
			done = append(done, o.OrderNo)
		case xerr.CodeOf(err) == xerr.NotDue, errors.Is(err, xerr.ErrOrderPaid), errors.Is(err, xerr.ErrOrderClosed):
			// raced by a payment or a cancel: nothing to expire
		default:
			return done, err
		}
	}
	return done, nil
}

func (b *Book) owned(ctx context.Context, s sqlx.Session, orderNo string, uid int64) (*model.SeckillOrder, error) {
	o, err := b.Orders.FindForUpdate(ctx, s, orderNo)
	if errors.Is(err, model.ErrNotFound) || (err == nil && int64(o.Uid) != uid) {
		return nil, xerr.ErrOrderNotFound // another user's order is as good as absent
	}
	return o, err
}

// move moves a reserved order to target and its quantity out of locked (to sold when
// paid, back to available otherwise).
func (b *Book) move(ctx context.Context, s sqlx.Session, aid int64, o *model.SeckillOrder, target string) error {
	ok, err := b.Orders.MoveStatus(ctx, s, o.OrderNo, domain.StateReserved, target)
	if err != nil {
		return err
	}
	if !ok {
		return xerr.ErrOrderClosed // cannot happen under the row lock; never a second move
	}
	var d model.InventoryDelta
	q := int64(o.Quantity)
	if target == domain.StatePaid {
		d.Add(0, -q, q)
	} else {
		d.Add(q, -q, 0)
	}
	return b.Inventory.ApplyDelta(ctx, s, aid, d)
}

// Recover hands activity aid back to Redis once Redis answers: under the activity's mode
// lock (one instance), mode mysql → rebuilding (no MySQL transaction sells after it
// commits: each checks the mode under the row lock), delete whatever Redis holds of the
// activity, rebuild it from MySQL, mode redis. A rebuilding mode left by a dead instance
// is taken over by the next one holding the lock.
func (b *Book) Recover(ctx context.Context, aid int64) error {
	// The mode lock: a short lease, renewed while this runs, so that a holder that died
	// or could not release it (Redis flapping) holds it up for modeLockSeconds at most.
	lock := redis.NewRedisLock(b.Store.Redis(), b.Store.Keys().ModeLock(aid))
	lock.SetExpire(modeLockSeconds)
	ok, err := lock.AcquireCtx(ctx)
	if err != nil || !ok {
		return err // another instance is at it (or Redis is not answering yet)
	}
	ctx, cancel := context.WithCancel(ctx)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		t := time.NewTicker(modeLockSeconds * time.Second / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if ok, err := lock.AcquireCtx(ctx); err != nil || !ok {
					logx.Errorf("degrade: activity %d: mode lock lost (%v): stopping", aid, err)
					cancel()
					return
				}
			}
		}
	}()
	defer func() {
		cancel()
		<-renewed
		if _, err := lock.ReleaseCtx(context.Background()); err != nil {
			logx.Errorf("degrade: activity %d: release mode lock (it lapses in %ds): %v", aid, modeLockSeconds, err)
		}
	}()
	mode, err := b.Inventory.FindMode(ctx, aid)
	if err != nil {
		return err
	}
	switch mode {
	case model.ModeRedis:
		b.observe(aid, mode, time.Now())
		return nil
	case model.ModeMySQL:
		// Not before MySQL is the complete book as this instance sees it: the Redis
		// sellers' leases lapsed, the outbox relayed, the writer caught up (awaitBook).
		if v := b.observe(aid, mode, time.Now()); !v.caught {
			return nil
		}
		switched, err := b.Inventory.SwitchMode(ctx, aid, model.ModeMySQL, model.ModeRebuilding)
		if err != nil || !switched {
			return err
		}
		metricSwitches.WithLabelValues(model.ModeRebuilding).Inc()
		logx.Infof("degrade: activity %d: Redis is back; mode rebuilding: forgetting what Redis holds, rebuilding from MySQL", aid)
	}
	b.observe(aid, model.ModeRebuilding, time.Now())
	start := time.Now()
	if err := b.Store.Recovery().Forget(ctx, aid); err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	for {
		_, err := b.Rebuild.Stock(rctx, aid)
		if err == nil {
			break
		}
		if xerr.CodeOf(err) != xerr.Busy || rctx.Err() != nil {
			return err
		}
		select {
		case <-rctx.Done():
			return rctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	switched, err := b.Inventory.SwitchMode(ctx, aid, model.ModeRebuilding, model.ModeRedis)
	if err != nil {
		return err
	}
	if switched {
		metricSwitches.WithLabelValues(model.ModeRedis).Inc()
		logx.Infof("degrade: activity %d: rebuilt from MySQL in %v; mode redis: Redis sells again", aid,
			time.Since(start).Round(time.Millisecond))
	}
	b.observe(aid, model.ModeRedis, time.Now())
	return nil
}
