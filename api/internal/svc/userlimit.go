package svc

import (
	"context"
	"hash/maphash"
	"sync"
	"time"

	"github.com/seckill/seckill/api/gatekeys"
)

// UserLimiter is a per-buyer limit of Quota per Period, counted in this gateway's memory and,
// when shared is set, in Redis (SharedCounts; docs/DESIGN.md "Security").
type UserLimiter struct {
	*local[int64]
	shared *SharedCounts // nil: local only
	keys   gatekeys.Keys
}

// NewUserLimiter counts quota per period seconds; shared (may be nil) counts in Redis.
func NewUserLimiter(period, quota int, shared *SharedCounts, keys gatekeys.Keys) *UserLimiter {
	return &UserLimiter{local: newLocal(period, quota, func(uid int64) uint64 { return uint64(uid) }),
		shared: shared, keys: keys}
}

// Allow takes one unit of uid's quota: false when over it. err is the shared limiter's
// Redis failure (the caller decides whether to let the request through).
func (l *UserLimiter) Allow(ctx context.Context, uid int64) (bool, error) {
	if !l.take(uid) {
		return false, nil
	}
	return l.takeShared(ctx, l.shared, l.keys.RateLimit(uid))
}

// AddrLimiter is the per-client-address reservation limit, counted like UserLimiter: in
// this gateway's memory, then (shared set) in Redis. Without sharing, a sold-out storm's
// rejections cost no Redis round trip at the edge.
type AddrLimiter struct {
	*local[string]
	shared *SharedCounts // nil: local only
	keys   gatekeys.Keys
}

var addrSeed = maphash.MakeSeed()

// NewAddrLimiter counts quota per period seconds per address; shared may be nil.
func NewAddrLimiter(period, quota int, shared *SharedCounts, keys gatekeys.Keys) *AddrLimiter {
	return &AddrLimiter{local: newLocal(period, quota, func(a string) uint64 { return maphash.String(addrSeed, a) }),
		shared: shared, keys: keys}
}

// Allow takes one unit of addr's quota (middleware.AddrLimit's reservation limiter).
func (l *AddrLimiter) Allow(ctx context.Context, addr string) (bool, error) {
	if !l.take(addr) {
		return false, nil
	}
	return l.takeShared(ctx, l.shared, l.keys.RateLimitAddr("reserve", addr))
}

// takeShared counts key in Redis against the local count's quota and period (shared nil:
// allowed).
func (l *local[K]) takeShared(ctx context.Context, shared *SharedCounts, key string) (bool, error) {
	if shared == nil {
		return true, nil
	}
	return shared.Take(ctx, key, int(l.period/int64(time.Second)), l.quota)
}

// local counts quota per period per key in memory, sharded.
type local[K comparable] struct {
	period int64 // ns
	quota  int
	hash   func(K) uint64
	now    func() time.Time
	shards [limiterShards]limiterShard[K]
}

const limiterShards = 32

type limiterShard[K comparable] struct {
	mu        sync.Mutex
	lastSweep int64 // unix ns
	count     map[K]*window
}

type window struct {
	start int64 // unix ns
	n     int
}

func newLocal[K comparable](period, quota int, hash func(K) uint64) *local[K] {
	l := &local[K]{period: int64(period) * int64(time.Second), quota: quota, hash: hash, now: time.Now}
	for i := range l.shards {
		l.shards[i].count = map[K]*window{}
	}
	return l
}

// take counts one request of k: false when over the quota.
func (l *local[K]) take(k K) bool {
	now := l.now().UnixNano()
	sh := &l.shards[l.hash(k)%limiterShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if now-sh.lastSweep >= l.period {
		// Forget closed windows once a period (the map stays bounded by the keys of the
		// last two periods).
		for key, w := range sh.count {
			if now-w.start >= l.period {
				delete(sh.count, key)
			}
		}
		sh.lastSweep = now
	}
	w := sh.count[k]
	if w == nil || now-w.start >= l.period {
		w = &window{start: now}
		sh.count[k] = w
	}
	w.n++
	return w.n <= l.quota
}
