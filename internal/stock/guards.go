package stock

import (
	"context"

	"github.com/zeromicro/go-zero/core/stores/redis"
)

// Lock returns the lease of activity aid for of (its key sk:{a<ID>}:<of>lock): "" while one
// instance loads or rebuilds it; the owner's name otherwise (degrade.ModeLock, draw.LockName,
// reconcile's).
func (s *Store) Lock(aid int64, of string) *redis.RedisLock {
	return redis.NewRedisLock(s.rds, s.keys.lock(aid, of))
}

// Ping says whether Redis answers.
func (s *Store) Ping(ctx context.Context) bool { return s.rds.PingCtx(ctx) }

// SetMissing records for seconds that activity aid does not exist; seconds <= 0 removes the
// record (the activity was found).
func (s *Store) SetMissing(ctx context.Context, aid int64, seconds int) error {
	if seconds <= 0 {
		_, err := s.rds.DelCtx(ctx, s.keys.missing(aid))
		return err
	}
	return s.rds.SetexCtx(ctx, s.keys.missing(aid), "1", seconds)
}

// Missing says whether activity aid is flagged as not existing.
func (s *Store) Missing(ctx context.Context, aid int64) (bool, error) {
	return s.rds.ExistsCtx(ctx, s.keys.missing(aid))
}
