package svc

import (
	"context"
	"time"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/api/internal/coalesce"
	"github.com/seckill/seckill/internal/event"
)

const (
	// sharedCountsInFlight is the most count pipelines one gateway has out at once.
	sharedCountsInFlight = 2
	// sharedCountsBatch is the most takes in one pipeline.
	sharedCountsBatch = 256
)

// SharedCounts counts the gateway's shared limits in Redis (RateLimit.Shared,
// AddrLimit.ReserveShared): one count per key and period, as go-zero's PeriodLimit keeps it
// (the key counts the takes of a window of period seconds from its first take, then
// expires). The takes that queue while earlier pipelines are out leave together as one
// pipeline (coalesce.Group, no timer: at low load a take goes alone at once): INCR and
// EXPIRE NX for each, which go-redis splits by cluster node. A reservation then pays a share
// of a round trip, where PeriodLimit's EVALSHA cost it a whole one per limit.
type SharedCounts struct {
	rds   *redis.Redis
	group *coalesce.Group[take, int64]
}

// take is one count of key, whose window is period seconds.
type take struct {
	key    string
	period int
}

// NewSharedCounts counts in rds.
func NewSharedCounts(rds *redis.Redis) *SharedCounts {
	s := &SharedCounts{rds: rds}
	s.group = coalesce.NewGroup(sharedCountsInFlight, sharedCountsBatch, coalesce.Metrics{}, s.send)
	return s
}

// send is one pipeline of takes: each key's count after its take. EXPIRE NX gives a key its
// window on the first take and never moves it (nor leaves a key without one if an earlier
// EXPIRE was lost). ctx is the first take's: a pipeline led by the front's address count,
// which runs before the request's span starts, is event.Untraced (no trace of its own).
func (s *SharedCounts) send(ctx context.Context, _ int64, takes []take) ([]int64, error) {
	ctx = event.Untraced(ctx)
	incr := make([]*red.IntCmd, len(takes))
	err := s.rds.PipelinedCtx(ctx, func(p redis.Pipeliner) error {
		for i, t := range takes {
			incr[i] = p.Incr(ctx, t.key)
			p.ExpireNX(ctx, t.key, time.Duration(t.period)*time.Second)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	counts := make([]int64, len(takes))
	for i, c := range incr {
		counts[i] = c.Val()
	}
	return counts, nil
}

// Take counts one request of key against quota per period seconds: false when over it.
// err: the count failed (Redis, or ctx ended before it was sent); the caller decides.
func (s *SharedCounts) Take(ctx context.Context, key string, period, quota int) (bool, error) {
	n, err := s.group.Do(ctx, 0, take{key: key, period: period})
	if err != nil {
		return true, err
	}
	return n <= int64(quota), nil
}
