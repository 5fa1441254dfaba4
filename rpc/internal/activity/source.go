// Package activity loads activities from MySQL into Redis: warm-up, and the cache
// backfill of a read that missed, under a per-activity Redis lock, with "no such
// activity" cached so that misses cannot hammer MySQL.
package activity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zeromicro/go-zero/core/logc"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
)

// Record is an activity and its MySQL inventory.
type Record struct {
	Activity  model.Activity
	Available int64
	Locked    int64
	Sold      int64
}

// Source reads an activity from the book of record. ErrNotFound when absent.
type Source interface {
	Load(ctx context.Context, id int64) (*Record, error)
}

// ErrNotFound is returned by a Source that has no such activity.
var ErrNotFound = errors.New("activity: not found")

// MySQLSource reads activity and inventory in one query.
type MySQLSource struct{ Activities model.ActivityModel }

// Load implements Source.
func (s MySQLSource) Load(ctx context.Context, id int64) (*Record, error) {
	row, err := s.Activities.FindOneWithInventory(ctx, uint64(id))
	if errors.Is(err, model.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("load activity %d: %w", id, err)
	}
	return &Record{Activity: row.Activity, Available: int64(row.Available), Locked: int64(row.Locked),
		Sold: int64(row.Sold)}, nil
}

// Loader warms activities up and backfills cache misses.
type Loader struct {
	Store      *stock.Store
	Source     Source
	Grace      time.Duration // keys live this long after the activity's end
	MissingTTL time.Duration // how long "no such activity" is cached
	Wait       time.Duration // how long a miss waits for another caller's backfill
	Now        func() time.Time
}

func (l *Loader) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// Warmup loads the activity's stock into Redis if it is absent (never overwriting
// live stock) and marks it active. ENDED after the activity's end.
func (l *Loader) Warmup(ctx context.Context, id int64) (created bool, snap stock.Snapshot, err error) {
	if err := domain.CheckActivityID(id); err != nil {
		return false, snap, err
	}
	rds := l.Store.Redis()
	keys := l.Store.Keys()
	rec, err := l.Source.Load(ctx, id)
	if errors.Is(err, ErrNotFound) {
		l.cacheMissing(ctx, id)
		return false, snap, xerr.ErrActivityNotFound
	}
	if err != nil {
		return false, snap, err
	}
	// An explicit warm-up of a known activity clears a stale "missing" mark.
	_, _ = rds.DelCtx(ctx, keys.Missing(id))
	if l.now().Unix() >= rec.Activity.EndTime {
		return false, snap, xerr.ErrEnded
	}
	created, err = l.warm(ctx, rec, rec.Activity.EndTime+int64(l.Grace/time.Second))
	if err != nil {
		return false, snap, err
	}
	if err := l.Store.MarkActive(ctx, id, rec.Activity.EndTime); err != nil {
		return false, snap, err
	}
	snap, err = l.Store.Stock(ctx, id)
	return created, snap, err
}

func (l *Loader) warm(ctx context.Context, rec *Record, expireAt int64) (bool, error) {
	a := rec.Activity
	created, _, err := l.Store.Warmup(ctx, stock.Meta{
		ActivityID: int64(a.Id), SkuID: int64(a.SkuId), Name: a.Name,
		Total:     rec.Available + rec.Locked + rec.Sold,
		Remaining: rec.Available, Locked: rec.Locked, Sold: rec.Sold,
		Start: a.StartTime, End: a.EndTime, Limit: int64(a.PerUserLimit),
		PayTimeout: int64(a.PayTimeoutSeconds), ExpireAt: expireAt,
	})
	return created, err
}

func (l *Loader) cacheMissing(ctx context.Context, id int64) {
	secs := int(l.MissingTTL / time.Second)
	if secs < 1 {
		secs = 1
	}
	if err := l.Store.Redis().SetexCtx(ctx, l.Store.Keys().Missing(id), "1", secs); err != nil {
		logc.Errorf(ctx, "cache missing activity %d: %v", id, err)
	}
}

// Stock returns the activity's stock from Redis, backfilling a miss from MySQL. Only
// the caller holding the activity's lock reads MySQL; the others wait for its result
// (BUSY if it takes longer than Wait). A live activity is warmed as by Warmup; an ended
// one is cached briefly (MissingTTL) so that reads of it stay off MySQL too.
func (l *Loader) Stock(ctx context.Context, id int64) (stock.Snapshot, error) {
	if err := domain.CheckActivityID(id); err != nil {
		return stock.Snapshot{}, err
	}
	snap, err := l.Store.Stock(ctx, id)
	if !errors.Is(err, stock.ErrNotWarm) {
		return snap, err
	}
	if err := l.checkMissing(ctx, id); err != nil {
		return snap, err
	}
	lock := redis.NewRedisLock(l.Store.Redis(), l.Store.Keys().Lock(id))
	lock.SetExpire(5)
	ok, err := lock.AcquireCtx(ctx)
	if err != nil {
		return snap, err
	}
	if !ok {
		return l.awaitBackfill(ctx, id)
	}
	defer func() {
		if _, err := lock.ReleaseCtx(context.WithoutCancel(ctx)); err != nil {
			logc.Errorf(ctx, "release backfill lock of activity %d: %v", id, err)
		}
	}()
	// Another caller may have filled it, or marked it missing, between our miss and our
	// lock (its lock already released).
	if snap, err = l.Store.Stock(ctx, id); !errors.Is(err, stock.ErrNotWarm) {
		return snap, err
	}
	if err := l.checkMissing(ctx, id); err != nil {
		return snap, err
	}
	rec, err := l.Source.Load(ctx, id)
	if errors.Is(err, ErrNotFound) {
		l.cacheMissing(ctx, id)
		return snap, xerr.ErrActivityNotFound
	}
	if err != nil {
		return snap, err
	}
	now := l.now().Unix()
	if now >= rec.Activity.EndTime {
		_, err = l.warm(ctx, rec, now+int64(l.MissingTTL/time.Second)+1)
	} else {
		_, err = l.warm(ctx, rec, rec.Activity.EndTime+int64(l.Grace/time.Second))
		if err == nil {
			err = l.Store.MarkActive(ctx, id, rec.Activity.EndTime)
		}
	}
	if err != nil {
		return snap, err
	}
	return l.Store.Stock(ctx, id)
}

func (l *Loader) awaitBackfill(ctx context.Context, id int64) (stock.Snapshot, error) {
	deadline := time.Now().Add(l.Wait)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return stock.Snapshot{}, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		snap, err := l.Store.Stock(ctx, id)
		if !errors.Is(err, stock.ErrNotWarm) {
			return snap, err
		}
		if err := l.checkMissing(ctx, id); err != nil {
			return snap, err
		}
	}
	return stock.Snapshot{}, stock.ErrNotWarm
}

// checkMissing returns ErrActivityNotFound while "no such activity" is cached for id.
func (l *Loader) checkMissing(ctx context.Context, id int64) error {
	missing, err := l.Store.Redis().ExistsCtx(ctx, l.Store.Keys().Missing(id))
	if err != nil {
		return err
	}
	if missing {
		return xerr.ErrActivityNotFound
	}
	return nil
}
