package reconcile

import (
	"context"
	"time"
)

// SetSleep replaces the pause of Conf.ReadDuty (tests record it).
func (r *Reconciler) SetSleep(f func(ctx context.Context, d time.Duration) error) { r.sleep = f }
