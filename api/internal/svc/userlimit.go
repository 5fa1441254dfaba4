package svc

import (
	"context"
	"sync"
	"time"

	"github.com/zeromicro/go-zero/core/limit"

	"github.com/seckill/seckill/internal/stock"
)

// UserLimiter is the per-buyer reservation limit: Quota per Period, counted first in this
// gateway's memory (PeriodLimit's semantics: a buyer's window opens with their first
// request and lasts Period; no Redis round trip), then,
// when shared is set, in Redis by go-zero's PeriodLimit so that every gateway shares the
// quota. A buyer over the local count is rejected without Redis.
type UserLimiter struct {
	period int64 // ns
	quota  int
	shared *limit.PeriodLimit // nil: local only
	keys   stock.Keys
	now    func() time.Time
	shards [limiterShards]limiterShard
}

const limiterShards = 32

type limiterShard struct {
	mu        sync.Mutex
	lastSweep int64 // unix ns
	count     map[int64]*window
}

type window struct {
	start int64 // unix ns
	n     int
}

// NewUserLimiter counts quota per period seconds; shared (may be nil) is the Redis limiter.
func NewUserLimiter(period, quota int, shared *limit.PeriodLimit, keys stock.Keys) *UserLimiter {
	l := &UserLimiter{period: int64(period) * int64(time.Second), quota: quota, shared: shared, keys: keys, now: time.Now}
	for i := range l.shards {
		l.shards[i].count = map[int64]*window{}
	}
	return l
}

// Allow takes one unit of uid's quota: false when over it. err is the shared limiter's
// Redis failure (the caller decides whether to let the request through).
func (l *UserLimiter) Allow(ctx context.Context, uid int64) (bool, error) {
	now := l.now().UnixNano()
	sh := &l.shards[uint64(uid)%limiterShards]
	sh.mu.Lock()
	if now-sh.lastSweep >= l.period {
		// Forget closed windows once a period (the map stays bounded by the buyers of
		// the last two periods).
		for u, w := range sh.count {
			if now-w.start >= l.period {
				delete(sh.count, u)
			}
		}
		sh.lastSweep = now
	}
	w := sh.count[uid]
	if w == nil || now-w.start >= l.period {
		w = &window{start: now}
		sh.count[uid] = w
	}
	w.n++
	n := w.n
	sh.mu.Unlock()
	if n > l.quota {
		return false, nil
	}
	if l.shared == nil {
		return true, nil
	}
	state, err := l.shared.TakeCtx(ctx, l.keys.RateLimit(uid))
	if err != nil {
		return true, err
	}
	return state != limit.OverQuota, nil
}
