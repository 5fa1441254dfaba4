package reconcile

import (
	"context"
	"time"
)

// SetSleep replaces the pause of Conf.ReadDuty (tests record it).
func (r *Reconciler) SetSleep(f func(ctx context.Context, d time.Duration) error) { r.sleep = f }

// SetNow replaces the clock Single reads when a call asks and when a run begins.
func (s *Single) SetNow(f func() time.Time) { s.now = f }

// LockName names Single's lease (stock.Store.Lock).
const LockName = lockName

// History is the record the last run left of activity aid's unexplained differences.
func (r *Reconciler) History(ctx context.Context, aid int64) (map[string]string, error) {
	return r.records.history(ctx, aid)
}

// RecordKeys are the keys of activity aid's history and last report.
func (r *Reconciler) RecordKeys(aid int64) (history, report string) {
	return r.records.historyKey(aid), r.records.reportKey(aid)
}
