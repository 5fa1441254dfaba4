package svc

import (
	"github.com/zeromicro/go-zero/core/limit"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/api/gatekeys"
	"github.com/seckill/seckill/api/internal/config"
	"github.com/seckill/seckill/api/internal/middleware"
)

// addrLimiters builds the per-address limiters (config AddrLimit): reservations counted in
// memory (and in Redis with ReserveShared: counts), failed authentications in the limiter Redis;
// nils when disabled. The keys are complete already (gatekeys.Keys), so no extra prefix.
func addrLimiters(c config.Config, keys gatekeys.Keys, counts *SharedCounts) (reserve *AddrLimiter,
	authFail *limit.PeriodLimit, err error) {
	if !c.AddrLimit.Enabled {
		return nil, nil, nil
	}
	rds, err := redis.NewRedis(c.Redis)
	if err != nil {
		return nil, nil, err
	}
	a := c.AddrLimit
	var shared *SharedCounts
	if a.ReserveShared {
		shared = counts
	}
	return NewAddrLimiter(a.Period, a.ReserveQuota, shared, keys),
		limit.NewPeriodLimit(a.AuthFailPeriod, a.AuthFailQuota, rds, ""), nil
}

// newSharedCounts is the gateway's one SharedCounts, in the limiter Redis, when a limit is
// shared (nil when none is): the per-buyer and the per-address counts share its pipelines.
func newSharedCounts(c config.Config) (*SharedCounts, error) {
	if !(c.RateLimit.Enabled && c.RateLimit.Shared) && !(c.AddrLimit.Enabled && c.AddrLimit.ReserveShared) {
		return nil, nil
	}
	rds, err := redis.NewRedis(c.Redis)
	if err != nil {
		return nil, err
	}
	return NewSharedCounts(rds), nil
}

// newMerchantLimit builds the per-merchant limit of writes and heavy reads (config
// MerchantLimit), counted in the limiter Redis; nil when disabled.
func newMerchantLimit(c config.Config, keys gatekeys.Keys) (*middleware.MerchantLimit, error) {
	if !c.MerchantLimit.Enabled {
		return nil, nil
	}
	rds, err := redis.NewRedis(c.Redis)
	if err != nil {
		return nil, err
	}
	m := c.MerchantLimit
	return &middleware.MerchantLimit{Limiter: limit.NewPeriodLimit(m.Period, m.Quota, rds, ""), Period: m.Period,
		Key: keys.RateLimitMerchant, Failure: middleware.FailurePolicy{Closed: c.LimiterFailure == config.FailClosed}}, nil
}

// newIdempotency is the Idempotency-Key middleware of the merchant's writes, its records in the
// gateway's Redis.
func newIdempotency(c config.Config, keys gatekeys.Keys) (*middleware.IdempotencyMiddleware, error) {
	rds, err := redis.NewRedis(c.Redis)
	if err != nil {
		return nil, err
	}
	return middleware.NewIdempotencyMiddleware(rds, keys.Idempotency), nil
}
