package book

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/mysqlx"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
)

var (
	// errFenced: the activity's mode changed under the MySQL book (no longer mysql).
	errFenced = xerr.New(xerr.Busy, "the activity is no longer in degrade mode, retry with the same request_id")
	errBusy   = xerr.New(xerr.Busy, "degrade mode: too many requests into MySQL, retry with the same request_id")
	// errMoved: the inventory row changed under its lock (cannot happen while every writer of it takes the lock).
	errMoved = errors.New("degrade mode: the inventory row changed under its lock")
)

// Conn opens the connection the MySQL book sells on: a business outcome returned from its transactions
// (SOLD_OUT, LIMIT_EXCEEDED, ...) does not count against go-zero's breaker.
func Conn(dsn string) sqlx.SqlConn { return mysqlx.Open(dsn, sqlx.WithAcceptable(xerr.IsOutcome)) }

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

// Reserve reserves qty for uid, idempotent per request id: a batch of one.
func (b *MySQL) Reserve(ctx context.Context, aid, uid, qty int64, requestID string) (domain.Reservation, error) {
	res, err := b.ReserveBatch(ctx, aid, []domain.ReserveItem{{UID: uid, Qty: qty, RequestID: requestID}})
	if err != nil {
		return domain.Reservation{}, err
	}
	return res[0].Reservation, res[0].Err
}

// ReserveBatch reserves items of activity aid in order, each answered as Reserve would, in one
// fenced transaction; err (the fence, an unknown activity, a dependency) fails the whole batch, changing nothing.
func (b *MySQL) ReserveBatch(ctx context.Context, aid int64, items []domain.ReserveItem) ([]stock.ReserveResult,
	error) {
	if err := domain.CheckActivityID(aid); err != nil {
		return nil, err
	}
	out := make([]stock.ReserveResult, len(items))
	var valid []int // the items whose values pass the checks, in order
	for i, it := range items {
		if out[i].Err = checkItem(it); out[i].Err == nil {
			valid = append(valid, i)
		}
	}
	if len(valid) == 0 {
		return out, nil
	}
	act, err := b.Activities.FindOne(ctx, uint64(aid))
	if errors.Is(err, model.ErrNotFound) {
		return nil, xerr.ErrActivityNotFound
	}
	if err != nil {
		return nil, xerr.Unavailable(err)
	}
	err = b.tx(ctx, aid, func(ctx context.Context, s sqlx.Session) error {
		return b.reserve(ctx, s, act, items, valid, out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func checkItem(it domain.ReserveItem) error {
	for _, err := range []error{domain.CheckUID(it.UID), domain.CheckQuantity(it.Qty),
		domain.CheckRequestID(it.RequestID)} {
		if err != nil {
			return err
		}
	}
	return nil
}

// reserve answers items[valid] into out inside the fenced transaction s, each as a single
// reservation run after the ones before it would: the counters, the replays and the buyers'
// holdings are read once, the stock taken in one UPDATE and the new orders written in one INSERT.
func (b *MySQL) reserve(ctx context.Context, s sqlx.Session, act *model.Activity, items []domain.ReserveItem,
	valid []int, out []stock.ReserveResult) error {
	aid := int64(act.Id)
	counters, err := b.Inventory.FindCounters(ctx, s, aid) // stable: the fence holds the row's lock
	if err != nil {
		return err
	}
	reqs := make([]model.OrderRequest, len(valid))
	for n, i := range valid {
		reqs[n] = model.OrderRequest{Uid: items[i].UID, RequestId: items[i].RequestID}
	}
	found, err := b.Orders.FindByRequests(ctx, s, aid, reqs)
	if err != nil {
		return err
	}
	orders := make(map[model.OrderRequest]*model.SeckillOrder, len(valid))
	for _, o := range found {
		orders[model.OrderRequest{Uid: int64(o.Uid), RequestId: o.RequestId}] = o
	}
	nowMs := time.Now().UnixMilli()
	var closed error // the window's answer to an item that is not a replay
	switch {
	case nowMs < act.StartTime*1000:
		closed = xerr.ErrNotStarted
	case nowMs >= act.EndTime*1000:
		closed = xerr.ErrEnded
	}
	held, err := b.holdings(ctx, s, aid, closed, reqs, orders)
	if err != nil {
		return err
	}
	remaining, taken := int64(counters.Available), int64(0)
	expireAt := nowMs + int64(act.PayTimeoutSeconds)*1000
	var placed []*model.SeckillOrder
	for n, i := range valid {
		it := items[i]
		if o := orders[reqs[n]]; o != nil {
			out[i] = stock.ReserveResult{Reservation: replay(o, remaining)}
			continue
		}
		switch {
		case closed != nil:
			out[i].Err = closed
		case held[it.UID]+it.Qty > int64(act.PerUserLimit):
			out[i].Err = xerr.ErrLimitExceeded
		case remaining < it.Qty:
			out[i].Err = xerr.ErrSoldOut
		default:
			remaining, taken, held[it.UID] = remaining-it.Qty, taken+it.Qty, held[it.UID]+it.Qty
			o := &model.SeckillOrder{OrderNo: b.Store.NewOrderNo(aid), RequestId: it.RequestID,
				ActivityId: uint64(aid), Uid: uint64(it.UID), Quantity: uint64(it.Qty), Status: domain.StateReserved,
				ExpireAt: expireAt / 1000, PlacedAt: nowMs / 1000}
			orders[reqs[n]], placed = o, append(placed, o)
			out[i] = stock.ReserveResult{Reservation: domain.Reservation{Order: domain.Order{OrderNo: o.OrderNo,
				Quantity: it.Qty, ExpireAt: expireAt, CreatedAt: nowMs, State: domain.StateReserved},
				Remaining: remaining}}
		}
	}
	if taken > 0 {
		ok, err := b.Inventory.TakeAvailable(ctx, s, aid, taken)
		if err != nil {
			return err
		}
		if !ok {
			return errMoved
		}
	}
	return b.Orders.InsertBatch(ctx, s, placed)
}

// holdings reads what each buyer of reqs holds who may reserve (the window open, not a replay).
func (b *MySQL) holdings(ctx context.Context, s sqlx.Session, aid int64, closed error, reqs []model.OrderRequest,
	orders map[model.OrderRequest]*model.SeckillOrder) (map[int64]int64, error) {
	var uids []int64
	if closed == nil {
		seen := map[int64]bool{}
		for _, r := range reqs {
			if orders[r] == nil && !seen[r.Uid] {
				seen[r.Uid] = true
				uids = append(uids, r.Uid)
			}
		}
	}
	return b.Orders.SumHeldByUsers(ctx, s, aid, uids)
}

// replay is the answer to a request that made order o: the order as it is, with remaining.
func replay(o *model.SeckillOrder, remaining int64) domain.Reservation {
	return domain.Reservation{Order: domain.Order{OrderNo: o.OrderNo, State: o.Status, Quantity: int64(o.Quantity),
		ExpireAt: o.ExpireAt * 1000, CreatedAt: o.PlacedAt * 1000}, Remaining: remaining, Replay: true}
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
		case xerr.CodeOf(err) == xerr.NotDue, xerr.CodeOf(err) == xerr.OrderPaid, xerr.CodeOf(err) == xerr.OrderClosed:
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
