package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/xerr"
)

// ErrRefused: re-emitting what MySQL lacks would not make the books agree (MySQL was
// changed behind the pipeline, or Redis itself is broken); it needs a person.
var ErrRefused = errors.New("reconcile: repair refused")

// Repair re-appends to the outbox an event for every order whose MySQL row is missing or behind
// Redis and whose change is not in the outbox; ErrRefused unless that would make the books agree.
func (r *Reconciler) Repair(ctx context.Context, aid int64) (int, Report, error) {
	res, err := r.compare(ctx, aid)
	if err != nil {
		return 0, Report{}, err
	}
	switch {
	case !res.rds.warm:
		return 0, res.report, fmt.Errorf("%w: activity %d is not in Redis: nothing to re-emit from",
			ErrRefused, aid)
	case !res.db.found:
		return 0, res.report, fmt.Errorf("%w: activity %d has no MySQL inventory row", ErrRefused, aid)
	case !res.rds.exact || res.truncated:
		return 0, res.report, xerr.Newf(xerr.Busy, "activity %d is changing too fast to repair now", aid)
	case res.broken:
		return 0, res.report, fmt.Errorf("%w: %s", ErrRefused, strings.Join(res.report.Diffs, "; "))
	case res.full != res.rds.counters():
		return 0, res.report, fmt.Errorf("%w: re-emitting the %d missing events would leave MySQL at %s, Redis has %s",
			ErrRefused, len(res.candidates), res.full, res.rds.counters())
	}
	if len(res.candidates) == 0 {
		return 0, res.report, nil
	}
	entries := make([]string, 0, len(res.candidates))
	for _, o := range res.candidates {
		e, err := event.Event{Type: event.Type(o.State), ActivityID: aid, SkuID: res.rds.sku, OrderNo: o.OrderNo,
			UID: o.UID, Quantity: o.Quantity, AtMs: res.rds.nowMs, RequestID: o.RequestID, CreatedMs: o.CreatedAt,
			ExpireMs: o.ExpireAt}.Pack(0, "")
		if err != nil {
			return 0, res.report, fmt.Errorf("reconcile %d: re-emit order %s: %w", aid, o.OrderNo, err)
		}
		entries = append(entries, e)
	}
	err = r.store.Outbox().Append(ctx, aid, entries)
	if err != nil {
		return 0, res.report, fmt.Errorf("reconcile %d: re-emit: %w", aid, err)
	}
	// The relay walks the active set; make sure the activity is in it.
	if err := r.store.Activate(ctx, aid, res.rds.end); err != nil {
		return len(res.candidates), res.report, err
	}
	return len(res.candidates), res.report, nil
}
