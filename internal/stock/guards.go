package stock

import (
	"context"

	"github.com/zeromicro/go-zero/core/stores/redis"
)

// Lock returns the lock on activity aid's key of the given name (a Keys method: Keys.ModeLock,
// while one instance hands the activity back to Redis; Keys.Lock, while one loads or rebuilds
// it; Keys.DrawLock, while one draws it; Keys.ReconLock, while one compares its books).
func (s *Store) Lock(key func(Keys, int64) string, aid int64) *redis.RedisLock {
	return redis.NewRedisLock(s.rds, key(s.keys, aid))
}

// Ping says whether Redis answers.
func (s *Store) Ping(ctx context.Context) bool { return s.rds.PingCtx(ctx) }

// SetMissing records for seconds that activity aid does not exist.
func (s *Store) SetMissing(ctx context.Context, aid int64, seconds int) error {
	return s.rds.SetexCtx(ctx, s.keys.Missing(aid), "1", seconds)
}

// ClearMissing removes the flag that activity aid does not exist.
func (s *Store) ClearMissing(ctx context.Context, aid int64) error {
	_, err := s.rds.DelCtx(ctx, s.keys.Missing(aid))
	return err
}

// Missing says whether activity aid is flagged as not existing.
func (s *Store) Missing(ctx context.Context, aid int64) (bool, error) {
	return s.rds.ExistsCtx(ctx, s.keys.Missing(aid))
}
