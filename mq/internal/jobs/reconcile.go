package jobs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/zrpc"
	"google.golang.org/grpc"

	"github.com/seckill/seckill/rpc/inventoryclient"
)

// Reconcile asks the inventory service to compare Redis with MySQL for every active
// activity (the same RPC the admin endpoint uses, so both see one history), and exports
// the verdict: a gauge per activity, the drift, and a log line with the numbers on a
// mismatch. It never changes either book; repair is an explicit command (cmd/repair).
type Reconcile struct {
	inv inventoryclient.Inventory
}

// NewReconcile returns the reconciliation job.
func NewReconcile(inv inventoryclient.Inventory) *Reconcile { return &Reconcile{inv: inv} }

// Tick reconciles every active activity.
func (r *Reconcile) Tick(ctx context.Context) error {
	act, err := r.inv.ListActive(ctx, &inventoryclient.ActiveReq{})
	if err != nil {
		return fmt.Errorf("list active: %w", err)
	}
	retireExcept(act.ActivityIds)
	var errs []error
	for _, aid := range act.ActivityIds {
		if _, err := r.Run(ctx, aid); err != nil {
			errs = append(errs, fmt.Errorf("activity %d: %w", aid, err))
		}
	}
	return errors.Join(errs...)
}

// Run reconciles one activity and records the result in the metrics.
func (r *Reconcile) Run(ctx context.Context, aid int64) (*inventoryclient.ReconcileResp, error) {
	// A run over a large activity takes seconds: the call may take what is left of ctx (a
	// tick: its Interval, 30 s) instead of the client's Timeout, which is for the other
	// jobs' calls. The inventory service allows it Reconcile.Timeout.
	var opts []grpc.CallOption
	if dl, ok := ctx.Deadline(); ok {
		opts = append(opts, zrpc.WithCallTimeout(time.Until(dl)))
	}
	resp, err := r.inv.Reconcile(ctx, &inventoryclient.ReconcileReq{ActivityId: aid}, opts...)
	if err != nil {
		return nil, err
	}
	label := strconv.FormatInt(aid, 10)
	track(label)
	setBooks(label, resp.Redis, resp.Db)
	drift := Drift(resp)
	metricDrift.WithLabelValues(label).Set(float64(drift))
	metricInFlight.WithLabelValues(label).Set(float64(resp.InFlight))
	switch resp.Status {
	case "consistent":
		metricReconcileStatus.WithLabelValues(label).Set(gaugeConsistent)
	case "in_flight":
		metricReconcileStatus.WithLabelValues(label).Set(gaugeInFlight)
	default:
		metricReconcileStatus.WithLabelValues(label).Set(gaugeMismatch)
		logx.Errorf("reconcile: activity %d: %s: redis %v, mysql %v, drift %d, in flight %d: %s",
			aid, resp.Status, resp.Redis, resp.Db, drift, resp.InFlight, strings.Join(resp.Diffs, "; "))
	}
	return resp, nil
}

// Drift is the total absolute difference of remaining/available, locked and sold between
// the books (0 when Redis is not warm).
func Drift(resp *inventoryclient.ReconcileResp) int64 {
	if resp.Redis == nil || resp.Db == nil {
		return 0
	}
	abs := func(x int64) int64 { return max(x, -x) }
	return abs(resp.Redis.Remaining-resp.Db.Available) + abs(resp.Redis.Locked-resp.Db.Locked) +
		abs(resp.Redis.Sold-resp.Db.Sold)
}
