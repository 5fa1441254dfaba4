package stock

import (
	"context"

	"github.com/zeromicro/go-zero/core/stores/redis"
)

// ModeLock returns the lock one instance holds while it hands activity aid back to Redis.
func (s *Store) ModeLock(aid int64) *redis.RedisLock {
	return redis.NewRedisLock(s.rds, s.keys.ModeLock(aid))
}

// RebuildLock returns the lock one instance holds while it loads or rebuilds activity aid.
func (s *Store) RebuildLock(aid int64) *redis.RedisLock {
	return redis.NewRedisLock(s.rds, s.keys.Lock(aid))
}

// Ping says whether Redis answers.
func (s *Store) Ping(ctx context.Context) bool { return s.rds.PingCtx(ctx) }

// MarkMissing records for seconds that activity aid does not exist.
func (s *Store) MarkMissing(ctx context.Context, aid int64, seconds int) error {
	return s.rds.SetexCtx(ctx, s.keys.Missing(aid), "1", seconds)
}

// ClearMissing removes the mark that activity aid does not exist.
func (s *Store) ClearMissing(ctx context.Context, aid int64) error {
	_, err := s.rds.DelCtx(ctx, s.keys.Missing(aid))
	return err
}

// Missing says whether activity aid is marked as not existing.
func (s *Store) Missing(ctx context.Context, aid int64) (bool, error) {
	return s.rds.ExistsCtx(ctx, s.keys.Missing(aid))
}
