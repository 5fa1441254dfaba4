package svc

import (
	"github.com/zeromicro/go-zero/core/limit"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/api/internal/config"
)

// addrLimiters builds the per-address limiters (config AddrLimit) on the limiter Redis;
// nils when disabled. The keys are complete already (stock.Keys), so no extra prefix.
func addrLimiters(c config.Config) (reserve, authFail *limit.PeriodLimit, err error) {
	if !c.AddrLimit.Enabled {
		return nil, nil, nil
	}
	rds, err := redis.NewRedis(c.Redis)
	if err != nil {
		return nil, nil, err
	}
	a := c.AddrLimit
	return limit.NewPeriodLimit(a.Period, a.ReserveQuota, rds, ""),
		limit.NewPeriodLimit(a.AuthFailPeriod, a.AuthFailQuota, rds, ""), nil
}
