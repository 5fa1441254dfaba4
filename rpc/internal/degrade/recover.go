package degrade

import (
	"context"
	"time"

	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/redis"
	"github.com/zeromicro/go-zero/core/threading"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
)

const (
	// modeLockSeconds is the lease of the lock one instance holds while it hands an activity back to Redis.
	modeLockSeconds = 6
	// maxHandBack bounds the rebuild of one hand-back; the next recovery pass tries again.
	maxHandBack = 5 * time.Minute
	// maxRecoveries bounds the hand-backs one instance runs at once.
	maxRecoveries = 8
)

// ModeLock names activity aid's lease of the switch back from degrade mode to Redis (forget,
// rebuild, mode redis; stock.Store.Lock): one instance does it.
const ModeLock = "mode"

// Recover hands activity aid back to Redis under its mode lock: mode mysql → rebuilding,
// forget what Redis holds of it, rebuild it from MySQL, mode redis.
func (f *Fence) Recover(ctx context.Context, aid int64) error {
	// A short lease, renewed while this runs: a holder that died holds it up for modeLockSeconds at most.
	lock := f.Store.Lock(aid, ModeLock)
	lock.SetExpire(modeLockSeconds)
	ok, err := lock.AcquireCtx(ctx)
	if err != nil || !ok {
		return err // another instance is at it (or Redis is not answering yet)
	}
	ctx, release := hold(ctx, aid, lock)
	defer release()
	return f.handBack(ctx, aid)
}

// hold renews the held mode lock every third of its lease until release, which also releases
// it; a renewal that fails cancels the returned context.
func hold(ctx context.Context, aid int64, lock *redis.RedisLock) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		t := time.NewTicker(modeLockSeconds * time.Second / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if ok, err := lock.AcquireCtx(ctx); err != nil || !ok {
					logx.Errorf("degrade: activity %d: mode lock lost (%v): stopping", aid, err)
					cancel()
					return
				}
			}
		}
	}()
	return ctx, func() {
		cancel()
		<-renewed
		if _, err := lock.ReleaseCtx(context.WithoutCancel(ctx)); err != nil {
			logx.Errorf("degrade: activity %d: release mode lock (it lapses in %ds): %v", aid, modeLockSeconds, err)
		}
	}
}

// handBack is Recover's work, run while the mode lock is held.
func (f *Fence) handBack(ctx context.Context, aid int64) error {
	mode, err := f.Inventory.FindMode(ctx, aid)
	if err != nil {
		return err
	}
	switch mode {
	case model.ModeRedis:
		f.observe(aid, mode, time.Now())
		return nil
	case model.ModeMySQL:
		// Not before MySQL is the complete book as this instance sees it: the Redis
		// sellers' leases lapsed, the outbox relayed, the writer caught up (awaitBook).
		if v := f.observe(aid, mode, time.Now()); !v.caught {
			return nil
		}
		// A Redis back from a restart has no scripts: each first call would fail with
		// NOSCRIPT, which go-zero's breaker counts (the probe reloads them too, every 5 s).
		if err := f.Store.LoadScripts(ctx); err != nil {
			return err
		}
		switched, err := f.Inventory.SwitchMode(ctx, aid, model.ModeMySQL, model.ModeRebuilding)
		if err != nil || !switched {
			return err
		}
		metricSwitches.WithLabelValues(model.ModeRebuilding).Inc()
		logx.Infof("degrade: activity %d: Redis is back; mode rebuilding: forgetting what Redis holds, "+
			"rebuilding from MySQL", aid)
	}
	f.observe(aid, model.ModeRebuilding, time.Now())
	start := time.Now()
	if err := f.Store.Recovery().Forget(ctx, aid); err != nil {
		return err
	}
	if err := f.rebuild(ctx, aid); err != nil {
		return err
	}
	switched, err := f.Inventory.SwitchMode(ctx, aid, model.ModeRebuilding, model.ModeRedis)
	if err != nil {
		return err
	}
	if switched {
		metricSwitches.WithLabelValues(model.ModeRedis).Inc()
		logx.Infof("degrade: activity %d: rebuilt from MySQL in %v; mode redis: Redis sells again", aid,
			time.Since(start).Round(time.Millisecond))
	}
	f.observe(aid, model.ModeRedis, time.Now())
	return nil
}

// rebuild waits for the loader's rebuild of activity aid, retrying its BUSY answers for up to maxHandBack.
func (f *Fence) rebuild(ctx context.Context, aid int64) error {
	ctx, cancel := context.WithTimeout(ctx, maxHandBack)
	defer cancel()
	for {
		_, err := f.Rebuild.Stock(ctx, aid)
		if err == nil || xerr.CodeOf(err) != xerr.Busy || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Start runs the recovery loop: every RecoverMs it hands the activities seen degraded back to Redis once it answers.
func (f *Fence) Start() {
	if !f.On {
		return
	}
	f.life.Lock()
	defer f.life.Unlock()
	if f.stopped || f.stop != nil {
		return
	}
	stop, done := make(chan struct{}), make(chan struct{})
	f.stop, f.done = stop, done
	ctx, cancel := context.WithCancel(event.Untraced(context.Background())) // no request's
	go func() {
		<-stop
		cancel() // a recovery in progress stops; the mode lock lapses
	}()
	runner := threading.NewTaskRunner(maxRecoveries)
	go func() {
		defer close(done)
		defer runner.Wait() // the hand-backs running end with ctx
		t := time.NewTicker(time.Duration(f.Conf.RecoverMs) * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			ids := f.Degraded()
			if len(ids) == 0 {
				continue
			}
			pctx, pcancel := context.WithTimeout(ctx, time.Second)
			up := f.Store.Ping(pctx)
			pcancel()
			if !up {
				continue
			}
			for _, aid := range ids {
				f.recoverAsync(ctx, runner, aid)
			}
		}
	}()
}

// recoverAsync runs Recover of activity aid on runner unless one runs for it already or runner is full.
func (f *Fence) recoverAsync(ctx context.Context, runner *threading.TaskRunner, aid int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.recovering[aid] {
		return
	}
	err := runner.ScheduleImmediately(func() {
		if err := f.Recover(ctx, aid); err != nil {
			logx.Errorf("degrade: activity %d: back to Redis: %v", aid, err)
		}
		f.mu.Lock()
		delete(f.recovering, aid)
		f.mu.Unlock()
	})
	if err != nil {
		return // maxRecoveries run: a later pass schedules it
	}
	if f.recovering == nil {
		f.recovering = map[int64]bool{}
	}
	f.recovering[aid] = true
}

// Stop ends the recovery loop; after it, Start does nothing.
func (f *Fence) Stop() {
	f.life.Lock()
	defer f.life.Unlock()
	f.stopped = true
	if f.stop != nil {
		close(f.stop)
		<-f.done
		f.stop = nil
	}
}
