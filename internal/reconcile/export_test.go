package reconcile

import (
	"context"
	"time"
)

// SetSleep replaces the pause of Conf.ReadDuty (tests record it).
func (r *Reconciler) SetSleep(f func(ctx context.Context, d time.Duration) error) { r.sleep = f }

// SetNow replaces the clock Single reads when a call asks and when a run begins.
func (s *Single) SetNow(f func() time.Time) { s.now = f }

// LockName names Single's lease (stock.Keys.Lock).
const LockName = lockName
