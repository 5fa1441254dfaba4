package writer

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/model"
)

// apply runs one transaction for the batch: order rows moved by the transition table,
// adjustments recorded once per event_id, inventory changed once per activity. When an
// event is sampled, the transaction runs in the span writer.apply (startApply).
func (w *Writer) apply(batch []*request) (res outcome, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), w.c.TxTimeout)
	defer cancel()
	ctx, span := startApply(ctx, batch)
	defer func() { event.EndSpan(span, err) }()
	err = w.conn.TransactCtx(ctx, func(ctx context.Context, s sqlx.Session) error {
		t := newTxn(ctx, s, w.models)
		err := t.run(batch)
		res = t.res
		return err
	})
	return res, err
}

// models are the tables the writer changes.
type models struct {
	orders      model.SeckillOrderModel
	adjustments model.StockAdjustmentModel
	inventory   model.InventoryModel
	activities  model.ActivityModel
	entries     model.DrawEntryModel
}

func newModels(conn sqlx.SqlConn) models {
	return models{orders: model.NewSeckillOrderModel(conn), adjustments: model.NewStockAdjustmentModel(conn),
		inventory: model.NewInventoryModel(conn), activities: model.NewActivityModel(conn),
		entries: model.NewDrawEntryModel(conn)}
}

// txn is one transaction of the writer: the order states it read and moved in memory,
// and the inventory changes it gathered, written once per activity at the end.
type txn struct {
	ctx context.Context
	s   sqlx.Session
	m   models
	res outcome

	orderNos []string          // the batch's orders, each once, in order of appearance
	state    map[string]string // order_no -> status: read from MySQL, then moved
	existing map[string]bool   // orders that have a row in MySQL
	created  []*model.SeckillOrder
	inv      map[int64]*invDelta // activity -> its change
	trades   map[string]string   // order_no -> the provider's trade_no its paid event carried
}

func newTxn(ctx context.Context, s sqlx.Session, m models) *txn {
	return &txn{ctx: ctx, s: s, m: m, res: outcome{applied: map[event.Type]int{}},
		existing: map[string]bool{}, inv: map[int64]*invDelta{}, trades: map[string]string{}}
}

// run is the transaction's steps, in the order of their statements.
func (t *txn) run(batch []*request) error {
	orders, adjustments, err := t.dropStale(split(batch))
	if err != nil {
		return err
	}
	if err := t.readStates(orders); err != nil {
		return err
	}
	t.transition(orders)
	if err := t.insertCreated(); err != nil {
		return err
	}
	if err := t.updateExisting(); err != nil {
		return err
	}
	if err := t.recordAdjustments(adjustments); err != nil {
		return err
	}
	return t.writeInventory()
}

// split separates order events from stock adjustments and draw entries, keeping their order.
func split(batch []*request) (orders, adjustments []event.Event) {
	for _, r := range batch {
		if r.ev.Type == event.Adjusted || r.ev.Type == event.Entered {
			adjustments = append(adjustments, r.ev)
		} else {
			orders = append(orders, r.ev)
		}
	}
	return orders, adjustments
}

// dropStale locks the inventory rows of the batch's activities, in activity order, and drops every
// change made under an epoch older than its activity's (0: no epoch, applied).
func (t *txn) dropStale(orders, adjustments []event.Event) ([]event.Event, []event.Event, error) {
	var aids []int64
	for _, evs := range [][]event.Event{orders, adjustments} {
		for _, ev := range evs {
			aids = append(aids, ev.ActivityID)
		}
	}
	slices.Sort(aids)
	epochs, err := t.m.inventory.FindEpochsForUpdate(t.ctx, t.s, slices.Compact(aids))
	if err != nil {
		return nil, nil, err
	}
	keep := func(evs []event.Event) []event.Event {
		out := evs[:0:0]
		for _, ev := range evs {
			if cur, ok := epochs[ev.ActivityID]; ok && ev.Epoch > 0 && ev.Epoch < cur {
				t.res.stale++
				logx.Infof("writer: event %s (%s %s of activity %d) of epoch %d dropped: the activity was rebuilt (epoch %d)",
					ev.EventID, ev.Type, ev.OrderNo, ev.ActivityID, ev.Epoch, cur)
				continue
			}
			out = append(out, ev)
		}
		return out
	}
	return keep(orders), keep(adjustments), nil
}

// readStates locks the order rows that exist and reads their status.
func (t *txn) readStates(orders []event.Event) error {
	seen := map[string]bool{}
	for _, ev := range orders {
		if !seen[ev.OrderNo] {
			seen[ev.OrderNo] = true
			t.orderNos = append(t.orderNos, ev.OrderNo)
		}
	}
	state, err := t.m.orders.FindStatusesForUpdate(t.ctx, t.s, t.orderNos)
	if err != nil {
		return err
	}
	t.state = state
	for ono := range state {
		t.existing[ono] = true
	}
	return nil
}

// transition moves each order through the table in memory: it counts what changes and
// what repeats, gathers the inventory deltas and notes the rows to create (with the first
// event of the order; the status is the final one).
func (t *txn) transition(orders []event.Event) {
	creating := map[string]bool{}
	for _, ev := range orders {
		next, d, changed := event.Transition(t.state[ev.OrderNo], ev.Type, ev.Quantity)
		if !changed {
			t.res.duplicates++
			continue
		}
		t.res.applied[ev.Type]++
		t.state[ev.OrderNo] = next
		if ev.Type == event.Paid && ev.TradeNo != "" {
			t.trades[ev.OrderNo] = ev.TradeNo
		}
		t.invOf(ev.ActivityID).Add(d.Available, d.Locked, d.Sold)
		if !t.existing[ev.OrderNo] && !creating[ev.OrderNo] {
			creating[ev.OrderNo] = true
			t.created = append(t.created, newOrder(ev))
		}
	}
}

// newOrder is the row of an order first seen in ev (its status is set at insert).
func newOrder(ev event.Event) *model.SeckillOrder {
	placed := ev.CreatedMs
	if placed == 0 {
		placed = ev.AtMs
	}
	return &model.SeckillOrder{OrderNo: ev.OrderNo, RequestId: ev.RequestID, ActivityId: uint64(ev.ActivityID),
		Uid: uint64(ev.UID), Quantity: uint64(ev.Quantity), ExpireAt: ev.ExpireMs / 1000, PlacedAt: placed / 1000}
}

// insertCreated inserts the new order rows in one statement, in their final status.
func (t *txn) insertCreated() error {
	for _, o := range t.created {
		o.Status, o.TradeNo = t.state[o.OrderNo], t.trades[o.OrderNo]
	}
	return t.m.orders.InsertBatch(t.ctx, t.s, t.created)
}

// updateExisting moves the existing rows to their new status, one statement per status.
func (t *txn) updateExisting() error {
	byStatus := map[string][]string{}
	for _, ono := range t.orderNos {
		if t.existing[ono] {
			byStatus[t.state[ono]] = append(byStatus[t.state[ono]], ono)
		}
	}
	for st, onos := range byStatus {
		if err := t.m.orders.SetStatus(t.ctx, t.s, st, onos); err != nil {
			return err
		}
	}
	// A provider's payment keeps its trade_no with the order: every existing order's in one
	// statement (one each made a batch of N payments N statements).
	trades := map[string]string{}
	for _, ono := range t.orderNos {
		if tn := t.trades[ono]; tn != "" && t.existing[ono] {
			trades[ono] = tn
		}
	}
	return t.m.orders.SetTradeNos(t.ctx, t.s, trades)
}

// recordAdjustments records each stock adjustment once per event_id; a new one changes
// available and the activity's total.
func (t *txn) recordAdjustments(adjustments []event.Event) error {
	for _, ev := range adjustments {
		if ev.Type == event.Entered {
			if err := t.recordEntry(ev); err != nil {
				return err
			}
			continue
		}
		inserted, err := t.m.adjustments.InsertIgnore(t.ctx, t.s, ev.EventID, ev.ActivityID, ev.Delta)
		if err != nil {
			return err
		}
		if !inserted {
			t.res.duplicates++
			continue
		}
		t.res.applied[event.Adjusted]++
		d := t.invOf(ev.ActivityID)
		d.Add(ev.Delta, 0, 0)
		d.total += ev.Delta
	}
	return nil
}

// writeInventory changes each activity's inventory in one statement (adding before
// subtracting), and its total when adjustments changed it, so available+locked+sold ==
// total holds in MySQL as it does in Redis.
func (t *txn) writeInventory() error {
	for aid, d := range t.inv {
		if !d.IsZero() {
			err := t.m.inventory.ApplyDelta(t.ctx, t.s, aid, d.InventoryDelta)
			if errors.Is(err, model.ErrNotFound) {
				return &poisonError{reason: fmt.Sprintf("no inventory row for activity %d", aid)}
			}
			if err != nil {
				return err
			}
		}
		if d.total != 0 {
			if err := t.m.activities.AddActivityTotal(t.ctx, t.s, aid, d.total); err != nil {
				return err
			}
		}
	}
	return nil
}

// invDelta is an activity's aggregated change in one transaction: its inventory, and its
// total (stock adjustments).
type invDelta struct {
	model.InventoryDelta
	total int64
}

func (t *txn) invOf(aid int64) *invDelta {
	if t.inv[aid] == nil {
		t.inv[aid] = &invDelta{}
	}
	return t.inv[aid]
}
