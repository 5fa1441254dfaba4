package reconcile

import (
	"context"
	"time"
)

// SetSleep replaces the pause of Conf.ReadDuty (tests record it).
func (r *Reconciler) SetSleep(f func(ctx context.Context, d time.Duration) error) { r.sleep = f }

// SetNow replaces the clock that stamps kept reports and the calls' asking time (tests freeze it).
func (s *Single) SetNow(now func() time.Time) { s.now = now }
