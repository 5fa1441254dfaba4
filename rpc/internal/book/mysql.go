package book

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
)

var (
	// errFenced: the activity's mode changed under the MySQL book (no longer mysql).
	errFenced = xerr.New(xerr.Busy, "the activity is no longer in degrade mode, retry with the same request_id")
	errBusy   = xerr.New(xerr.Busy, "degrade mode: too many requests into MySQL, retry with the same request_id")
)

// Conn opens the connection the MySQL book sells on: a business outcome returned from its transactions
// (SOLD_OUT, LIMIT_EXCEEDED, ...) does not count against go-zero's breaker.
func Conn(dsn string) sqlx.SqlConn { return sqlx.NewMysql(dsn, sqlx.WithAcceptable(xerr.IsOutcome)) }

// MySQL is the MySQL book (degrade mode): each call is one transaction fenced by the activity's mode.
type MySQL struct {
	DB         sqlx.SqlConn
	Inventory  model.InventoryModel
	Orders     model.SeckillOrderModel
	Activities model.ActivityModel
	Store      *stock.Store // order numbers
	// Concurrency bounds one activity's transactions at once on this instance; over it, BUSY.
	Concurrency int
	// Seen, when set, is told the mode the fence found when it is not mysql.
	Seen func(aid int64, mode string)

	mu   sync.Mutex
	sems map[int64]chan struct{}
}

// acquire takes a slot of the activity's semaphore, or answers BUSY.
func (b *MySQL) acquire(aid int64) (release func(), err error) {
	b.mu.Lock()
	if b.sems == nil {
		b.sems = map[int64]chan struct{}{}
	}
	sem := b.sems[aid]
	if sem == nil {
		sem = make(chan struct{}, b.Concurrency)
		b.sems[aid] = sem
	}
	b.mu.Unlock()
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	default:
		return nil, errBusy
	}
}

// tx runs fn in one MySQL transaction that starts by locking the activity's inventory row
// and checking that its mode is mysql (the fence), under the activity's semaphore.
func (b *MySQL) tx(ctx context.Context, aid int64, fn func(ctx context.Context, s sqlx.Session) error) error {
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
			if b.Seen != nil {
				b.Seen(aid, mode)
			}
			return errFenced
		}
		return fn(ctx, s)
	})
	return xerr.Unavailable(err)
}

// Reserve reserves qty for uid in one transaction: the fence, a replay of the request id, the window,
// the per-user limit, the conditional stock update, the order row.
func (b *MySQL) Reserve(ctx context.Context, aid, uid, qty int64, requestID string) (stock.Reservation, error) {
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
		nowMs := time.Now().UnixMilli()
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

// ReserveBatch reserves items of activity aid in order, each answered as Reserve would.
func (b *MySQL) ReserveBatch(ctx context.Context, aid int64, items []stock.ReserveItem) ([]stock.ReserveResult,
	error) {
	out := make([]stock.ReserveResult, len(items))
	for i, it := range items {
		res, err := b.Reserve(ctx, aid, it.UID, it.Qty, it.RequestID)
		if xerr.IsDependencyFailure(err) || errors.Is(err, errFenced) {
			return nil, err
		}
		out[i] = stock.ReserveResult{Reservation: res, Err: err}
	}
	return out, nil
}

// Confirm pays a reserved order of uid, with the Redis book's answers.
func (b *MySQL) Confirm(ctx context.Context, orderNo string, uid int64) error {
	return b.order(ctx, orderNo, uid, func(ctx context.Context, s sqlx.Session, aid int64,
		o *model.SeckillOrder) error {
		switch o.Status {
		case domain.StatePaid:
			return nil
		case domain.StateReserved:
		default:
			return xerr.ErrOrderClosed
		}
		if time.Now().UnixMilli() >= o.ExpireAt*1000 {
			return xerr.ErrOrderClosed // expiry is due: a pay and an expiry never both win
		}
		return b.move(ctx, s, aid, o, domain.StatePaid)
	})
}

// Release cancels (domain.StateCancelled) or expires (domain.StateExpired, once due) a reserved
// order of uid, with the Redis book's answers.
func (b *MySQL) Release(ctx context.Context, orderNo string, uid int64, target string) error {
	if err := checkOwner(uid); err != nil {
		return err
	}
	if target != domain.StateCancelled && target != domain.StateExpired {
		return xerr.Newf(xerr.InvalidArgument, "bad release target %q", target)
	}
	return b.order(ctx, orderNo, uid, func(ctx context.Context, s sqlx.Session, aid int64,
		o *model.SeckillOrder) error {
		switch o.Status {
		case target:
			return nil
		case domain.StatePaid:
			return xerr.ErrOrderPaid
		case domain.StateReserved:
		default:
			return xerr.ErrOrderClosed
		}
		if target == domain.StateExpired && time.Now().UnixMilli() < o.ExpireAt*1000 {
			return xerr.New(xerr.NotDue, "the order is not due to expire")
		}
		return b.move(ctx, s, aid, o, target)
	})
}

func checkOwner(uid int64) error {
	if uid < 1 {
		return xerr.New(xerr.InvalidArgument, "uid must be >= 1 (the order's owner)")
	}
	return nil
}

// order runs fn in the fenced transaction of orderNo's activity on the order, locked, when uid owns it.
func (b *MySQL) order(ctx context.Context, orderNo string, uid int64,
	fn func(ctx context.Context, s sqlx.Session, aid int64, o *model.SeckillOrder) error) error {
	if err := checkOwner(uid); err != nil {
		return err
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
		return fn(ctx, s, aid, o)
	})
}

// ExpireDue expires up to limit reserved orders of activity aid past their expire_at, one
// transaction each; it returns the orders it expired.
func (b *MySQL) ExpireDue(ctx context.Context, aid int64, limit int) ([]string, error) {
	due, err := b.Orders.FindDueReservedByActivity(ctx, aid, time.Now().Unix()+1, limit)
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

func (b *MySQL) owned(ctx context.Context, s sqlx.Session, orderNo string, uid int64) (*model.SeckillOrder, error) {
	o, err := b.Orders.FindForUpdate(ctx, s, orderNo)
	if errors.Is(err, model.ErrNotFound) || (err == nil && int64(o.Uid) != uid) {
		return nil, xerr.ErrOrderNotFound // another user's order is as good as absent
	}
	return o, err
}

// move moves a reserved order to target and its quantity out of locked (to sold or back to available).
func (b *MySQL) move(ctx context.Context, s sqlx.Session, aid int64, o *model.SeckillOrder, target string) error {
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
