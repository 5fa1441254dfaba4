package relay

import (
	"context"
	"errors"
	"time"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/stock"
)

// What the Acker does once it finds that Redis lost changes it acknowledged (AckBatch's
// reissued entries, run's rolledBack rounds), or that an activity is no longer warm: the
// stock hash deleted for a rebuild, the activity's tally forgotten.

// lostRetries bound how long lose retries the deletion (every lostRetryEvery): after that the
// marks stay, and the next change of the activity finds the loss again.
const (
	lostRetries    = 100
	lostRetryEvery = 200 * time.Millisecond
)

// lose has activity aid's stock hash deleted while it is still of epoch (stock.Recovery.Lost):
// Redis lost changes this Acker acknowledged. Until it is, each change of that epoch answers
// BUSY; the first attempt runs in the caller, the retries (a breaker still open) in the background.
func (a *Acker) lose(aid, epoch, seq int64) {
	a.mu.Lock()
	if a.lost == nil {
		a.lost = map[int64]int64{}
	}
	if ep, ok := a.lost[aid]; ok && ep == epoch {
		a.mu.Unlock()
		return
	}
	a.lost[aid] = epoch
	a.mu.Unlock()
	try := func(n int) bool {
		ctx, cancel := context.WithTimeout(event.Untraced(context.Background()), ackCheckTimeout)
		defer cancel()
		gone, err := a.store.Recovery().Lost(ctx, aid, epoch)
		if n == 0 || err == nil {
			logx.Errorf("acker: activity %d: Redis lost changes acknowledged in epoch %d, or may have (change "+
				"count %d reissued or behind, or another Redis serving it since): stock hash deleted for a rebuild: "+
				"%v (%v, attempt %d)", aid, epoch, seq, gone, err, n+1)
		}
		if err != nil && !errors.Is(err, stock.ErrNotWarm) && n < lostRetries {
			return false
		}
		a.mu.Lock()
		if err == nil || errors.Is(err, stock.ErrNotWarm) {
			delete(a.tallies, aid) // the rebuild starts a new epoch
		}
		delete(a.lost, aid)
		a.mu.Unlock()
		return true
	}
	if try(0) {
		return
	}
	go func() {
		for n := 1; !try(n); n++ {
			time.Sleep(lostRetryEvery)
		}
	}()
}

// forgetMark drops what the Acker recorded of an activity that is no longer warm.
func (a *Acker) forgetMark(aid int64) {
	a.mu.Lock()
	delete(a.tallies, aid)
	a.mu.Unlock()
}
