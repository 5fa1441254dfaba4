package jobs

import (
	"context"
	"errors"
	"fmt"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/rpc/inventoryclient"
)

// Expiry asks the inventory service to release every due unpaid order of every active
// activity. The expire_due script re-checks each order (still reserved, due), so two
// instances releasing the same order release it once; MySQL follows through the events.
type Expiry struct {
	c   ExpiryConf
	inv inventoryclient.Inventory
}

// NewExpiry returns the expiry job.
func NewExpiry(c ExpiryConf, inv inventoryclient.Inventory) *Expiry { return &Expiry{c: c, inv: inv} }

// Tick runs one pass over the active activities.
func (e *Expiry) Tick(ctx context.Context) error {
	_, err := e.Run(ctx)
	return err
}

// Run is Tick, returning the number of orders released.
func (e *Expiry) Run(ctx context.Context) (int64, error) {
	act, err := e.inv.ListActive(ctx, &inventoryclient.ActiveReq{})
	if err != nil {
		return 0, fmt.Errorf("list active: %w", err)
	}
	var total int64
	var errs []error
	for _, aid := range act.ActivityIds {
		n, err := e.expire(ctx, aid)
		total += n
		if err != nil {
			errs = append(errs, fmt.Errorf("activity %d: %w", aid, err))
		}
	}
	return total, errors.Join(errs...)
}

// expire calls ExpireDue until a call comes back short of a full batch.
func (e *Expiry) expire(ctx context.Context, aid int64) (int64, error) {
	batch := e.c.Batch
	var n int64
	for round := 0; round < e.c.MaxRounds; round++ {
		resp, err := e.inv.ExpireDue(ctx, &inventoryclient.ExpireDueReq{ActivityId: aid, Limit: int64(batch)})
		if err != nil {
			return n, err
		}
		n += resp.Expired
		metricExpired.Add(float64(resp.Expired))
		if resp.Expired < int64(batch) {
			break
		}
	}
	if n > 0 {
		logx.Infof("expiry: activity %d: %d unpaid orders released", aid, n)
	}
	return n, nil
}
