package reconcile

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
)

type dbOrder struct {
	state    string
	qty      int64
	expireAt int64 // unix s
}

type dbBook struct {
	found    bool
	c        counters
	orders   map[string]dbOrder
	adjusted map[string]bool
}

// read takes both books, MySQL first: a healthy MySQL is never ahead of a Redis snapshot
// taken after it.
func (r *Reconciler) read(ctx context.Context, aid int64) (*result, error) {
	if err := domain.CheckActivityID(aid); err != nil {
		return nil, err
	}
	db, err := r.readDB(ctx, aid)
	if err != nil {
		return nil, err
	}
	rds, err := r.readRedis(ctx, aid)
	if err != nil {
		return nil, err
	}
	if !db.found && !rds.warm {
		return nil, xerr.ErrActivityNotFound
	}
	return &result{db: db, rds: rds, seen: map[string]string{}, reached: map[string]bool{},
		report: Report{ActivityID: aid, DB: DB(db.c)}}, nil
}

// readDB reads inventory, orders and applied adjustments in one transaction: under
// REPEATABLE READ (the MySQL and MariaDB default) they are one snapshot, in which the
// writer's invariants hold exactly.
func (r *Reconciler) readDB(ctx context.Context, aid int64) (dbBook, error) {
	b := dbBook{orders: map[string]dbOrder{}, adjusted: map[string]bool{}}
	err := r.db.TransactCtx(ctx, func(ctx context.Context, s sqlx.Session) error {
		return b.read(ctx, r.books, s, aid)
	})
	if err != nil {
		return b, fmt.Errorf("reconcile %d: read mysql: %w", aid, err)
	}
	return b, nil
}

// read fills b from the tables inside session.
func (b *dbBook) read(ctx context.Context, m books, s sqlx.Session, aid int64) error {
	inv, err := m.inventory.FindCounters(ctx, s, aid)
	switch {
	case errors.Is(err, model.ErrNotFound):
	case err != nil:
		return err
	default:
		b.found = true
		b.c = counters{Total: int64(inv.Total), Available: int64(inv.Available), Locked: int64(inv.Locked),
			Sold: int64(inv.Sold)}
	}
	orders, err := m.orders.FindStatesByActivity(ctx, s, aid)
	if err != nil {
		return err
	}
	for _, o := range orders {
		b.orders[o.OrderNo] = dbOrder{state: o.Status, qty: int64(o.Quantity), expireAt: o.ExpireAt}
	}
	ids, err := m.adjustments.FindEventIdsByActivity(ctx, s, aid)
	if err != nil {
		return err
	}
	for _, id := range ids {
		b.adjusted[id] = true
	}
	return nil
}

type redisBook struct {
	warm    bool
	exact   bool // the order list and the counters are one snapshot
	c       counters
	sku     int64
	end     int64    // the last due time: end + pay timeout (the active set's score)
	nos     []string // oldest first
	orders  map[string]domain.Order
	lastID  string // newest outbox entry at the snapshot; "" when empty
	nowMs   int64
	history map[string]string
}

func (b redisBook) counters() counters { return b.c }

// orderChunk is how many orders one read of readRedis takes: each read is a short
// pipeline, so reconciliation never holds the activity's shard for long.
const orderChunk = 500

// readRedis takes the activity's Redis book as it was at one MULTI without blocking its shard:
// the orders are read in chunks, paced by ReadDuty, and put back as they were at that MULTI.
func (r *Reconciler) readRedis(ctx context.Context, aid int64) (redisBook, error) {
	sg, err := r.store.Sight(ctx, aid)
	if err != nil {
		return redisBook{}, fmt.Errorf("reconcile %d: read redis: %w", aid, err)
	}
	st := sg.Stock
	b := redisBook{warm: sg.Warm, exact: true, sku: st.SkuID, end: st.LastDue(),
		c:      counters{Total: st.Total, Available: st.Remaining, Locked: st.Locked, Sold: st.Sold},
		orders: map[string]domain.Order{}, lastID: sg.LastID, nowMs: sg.NowMs}
	if b.history, err = r.records.history(ctx, aid); err != nil {
		return redisBook{}, fmt.Errorf("reconcile %d: read history: %w", aid, err)
	}
	if !sg.Warm {
		return b, nil
	}
	var cursor uint64
	for {
		start := time.Now()
		page, next, err := r.store.ScanOrders(ctx, sg, cursor, orderChunk)
		if err != nil {
			return b, fmt.Errorf("reconcile %d: read orders: %w", aid, err)
		}
		cursor = next
		for _, o := range page {
			if _, seen := b.orders[o.OrderNo]; !seen { // HSCAN may return an order twice: the first holds
				b.orders[o.OrderNo] = o
			}
		}
		if cursor == 0 {
			break
		}
		if err := r.pace(ctx, start); err != nil {
			return b, err
		}
	}
	for no := range b.orders {
		b.nos = append(b.nos, no)
	}
	sort.Slice(b.nos, func(i, j int) bool {
		oi, oj := b.orders[b.nos[i]], b.orders[b.nos[j]]
		return oi.CreatedAt < oj.CreatedAt || oi.CreatedAt == oj.CreatedAt && oi.OrderNo < oj.OrderNo
	})
	return b, nil
}

// outboxPage is how many entries one XRANGE reads.
const outboxPage = 1000

// readOutbox returns the activity's outbox entries up to lastID (those the Redis snapshot
// already reflects), oldest first. truncated: there were more than MaxOutbox.
func (r *Reconciler) readOutbox(ctx context.Context, aid int64, lastID string) (evs []event.Event, truncated bool,
	err error) {
	if lastID == "" {
		return nil, false, nil
	}
	start := "-"
	for {
		msgs, err := r.store.Outbox().Entries(ctx, aid, start, lastID, outboxPage)
		if err != nil {
			return nil, false, fmt.Errorf("reconcile %d: read outbox: %w", aid, err)
		}
		for _, m := range msgs {
			es, err := event.FromEntry(m.ID, m.Values) // a reserve batch's entry holds several
			if err != nil {
				continue // the relay dead-letters it; its orders show up as differences
			}
			evs = append(evs, es...)
		}
		if len(evs) > r.c.MaxOutbox {
			return evs, true, nil
		}
		if len(msgs) < outboxPage {
			return evs, false, nil
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
}

// pace pauses after a chunk of reading that began at start, as ReadDuty says.
func (r *Reconciler) pace(ctx context.Context, start time.Time) error {
	if r.c.ReadDuty <= 0 || r.c.ReadDuty >= 1 {
		return nil
	}
	return r.sleep(ctx, time.Duration(float64(time.Since(start))*(1/r.c.ReadDuty-1)))
}

// sleepCtx waits for d, or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
