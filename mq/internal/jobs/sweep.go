package jobs

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// CaughtUp reports whether the writer group has consumed everything on the order topic
// (kafkax.Progress: the topic's end offsets, then Reached).
type CaughtUp func(ctx context.Context) (bool, error)

// Sweep expires in MySQL, with their stock, the orders reserved past their expire_at by After
// of activities no longer warm, once the writer group has caught up (docs/DESIGN.md, "Jobs").
type Sweep struct {
	c         SweepConf
	inv       inventoryclient.Inventory
	db        sqlx.SqlConn
	orders    model.SeckillOrderModel
	inventory model.InventoryModel
	caughtUp  CaughtUp
	now       func() time.Time
}

// NewSweep returns the sweep job. caughtUp nil: no pipeline to wait for.
func NewSweep(c SweepConf, inv inventoryclient.Inventory, db sqlx.SqlConn, caughtUp CaughtUp) *Sweep {
	return &Sweep{c: c, inv: inv, db: db, orders: model.NewSeckillOrderModel(db),
		inventory: model.NewInventoryModel(db), caughtUp: caughtUp, now: time.Now}
}

// Tick sweeps once.
func (s *Sweep) Tick(ctx context.Context) error {
	_, err := s.Run(ctx)
	return err
}

// Run is Tick, returning the orders it expired.
func (s *Sweep) Run(ctx context.Context) ([]string, error) {
	due, err := s.orders.FindOverdueReserved(ctx, s.now().Add(-s.c.After).Unix(), s.c.Batch)
	if err != nil || len(due) == 0 {
		return nil, err
	}
	if s.caughtUp != nil {
		ok, err := s.caughtUp(ctx)
		if err != nil {
			return nil, fmt.Errorf("sweep: writer progress: %w", err)
		}
		if !ok {
			return nil, nil // events still on their way: next tick
		}
	}
	act, err := s.inv.ListActive(ctx, &inventoryclient.ActiveReq{})
	if err != nil {
		return nil, fmt.Errorf("sweep: list active: %w", err)
	}
	var swept []string
	for _, o := range due {
		if slices.Contains(act.ActivityIds, int64(o.ActivityId)) {
			continue // warm: Redis holds it, the expiry job releases it
		}
		ok, err := s.expire(ctx, o)
		if err != nil {
			return swept, fmt.Errorf("sweep %s: %w", o.OrderNo, err)
		}
		if ok {
			swept = append(swept, o.OrderNo)
		}
	}
	if len(swept) > 0 {
		metricSwept.Add(float64(len(swept)))
		logx.Infof("sweep: expired %d reserved order(s) whose Redis keys are gone, e.g. %s", len(swept), swept[0])
	}
	return swept, nil
}

// expire moves one order reserved -> expired and releases its stock, in one transaction.
func (s *Sweep) expire(ctx context.Context, o *model.SeckillOrder) (bool, error) {
	_, d, _ := event.Transition(domain.StateReserved, event.Expired, int64(o.Quantity))
	var delta model.InventoryDelta
	delta.Add(d.Available, d.Locked, d.Sold)
	var changed bool
	err := s.db.TransactCtx(ctx, func(ctx context.Context, session sqlx.Session) error {
		var err error
		if changed, err = s.orders.ExpireReserved(ctx, session, o.OrderNo); err != nil || !changed {
			return err
		}
		return s.inventory.ApplyDelta(ctx, session, int64(o.ActivityId), delta)
	})
	return changed, err
}
