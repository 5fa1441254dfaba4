package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// Warmup loads activities that start within Lead (and have not ended) into Redis, so the
// first buyer meets a warm cache without a merchant call. The Warmup RPC is set-if-absent,
// so repeats and several instances are harmless; activities already in the active set are
// skipped to spare MySQL the read.
type Warmup struct {
	c          WarmupConf
	inv        inventoryclient.Inventory
	activities model.ActivityModel
}

// NewWarmup returns the scheduled warm-up job; db is MySQL, where activities are listed.
func NewWarmup(c WarmupConf, inv inventoryclient.Inventory, db sqlx.SqlConn) *Warmup {
	return &Warmup{c: c, inv: inv, activities: model.NewActivityModel(db)}
}

// Tick warms the activities due.
func (w *Warmup) Tick(ctx context.Context) error {
	_, err := w.Run(ctx)
	return err
}

// Run is Tick, returning the ids it warmed (created in Redis).
func (w *Warmup) Run(ctx context.Context) ([]int64, error) {
	now := time.Now()
	ids, err := w.activities.FindActivityIdsStartingBy(ctx, now.Unix(), now.Add(w.c.Lead).Unix())
	if err != nil {
		return nil, fmt.Errorf("list upcoming activities: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	act, err := w.inv.ListActive(ctx, &inventoryclient.ActiveReq{})
	if err != nil {
		return nil, fmt.Errorf("list active: %w", err)
	}
	warm := make(map[int64]bool, len(act.ActivityIds))
	for _, id := range act.ActivityIds {
		warm[id] = true
	}
	var warmed []int64
	var errs []error
	for _, id := range ids {
		if warm[id] {
			continue
		}
		resp, err := w.inv.Warmup(ctx, &inventoryclient.WarmupReq{ActivityId: id})
		switch c := xerr.FromStatus(err); {
		case err == nil:
			if resp.Warmed {
				warmed = append(warmed, id)
				metricWarmed.Inc()
				logx.Infof("warmup: activity %d loaded into Redis (remaining %d)", id, resp.Stock.GetRemaining())
			}
		case c.Code == xerr.Ended || c.Code == xerr.ActivityNotFound:
			// ended or deleted between the query and the call
		default:
			errs = append(errs, fmt.Errorf("activity %d: %w", id, err))
		}
	}
	return warmed, errors.Join(errs...)
}
