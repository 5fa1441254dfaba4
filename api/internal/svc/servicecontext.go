package svc

import (
	"github.com/zeromicro/go-zero/core/limit"
	"github.com/zeromicro/go-zero/core/stores/redis"
	"github.com/zeromicro/go-zero/rest"
	"github.com/zeromicro/go-zero/zrpc"

	"github.com/seckill/seckill/api/internal/config"
	"github.com/seckill/seckill/api/internal/middleware"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// ServiceContext holds everything that outlives a request, created once.
type ServiceContext struct {
	Config        config.Config
	MerchantClaim rest.Middleware
	BuyerClaim    rest.Middleware

	RpcClient zrpc.Client
	// Inventory is the inventory service: every read and write of activities and stock.
	Inventory inventoryclient.Inventory
	Keys      stock.Keys
	// Limiter counts reservations per buyer; nil when RateLimit.Enabled is false.
	Limiter *limit.PeriodLimit
	// LimiterFailure is what every limiter does when its Redis fails (LimiterFailure).
	LimiterFailure middleware.FailurePolicy
	// AddrReserve and AddrAuthFail count per client address (AddrLimit); nil when disabled.
	AddrReserve, AddrAuthFail *limit.PeriodLimit
}

// New builds the context: the zRPC client of the inventory service (which owns the
// activities; the gateway holds no database handle) and the Redis-backed per-user limiter.
func New(c config.Config) (*ServiceContext, error) {
	// go-zero's duration interceptor logs every non-OK reply at error level, sold-outs
	// included; ours logs only real failures and slow calls.
	c.Inventory.Middlewares.Duration = false
	cli, err := zrpc.NewClient(c.Inventory, zrpc.WithUnaryClientInterceptor(xerr.UnaryClientInterceptor))
	if err != nil {
		return nil, err
	}
	keys := stock.Keys{Prefix: c.KeyPrefix}
	var limiter *limit.PeriodLimit
	if c.RateLimit.Enabled {
		rds, err := redis.NewRedis(c.Redis)
		if err != nil {
			return nil, err
		}
		// The key is complete already (stock.Keys builds it), so no extra prefix.
		limiter = limit.NewPeriodLimit(c.RateLimit.Period, c.RateLimit.Quota, rds, "")
	}
	addrReserve, addrAuthFail, err := addrLimiters(c)
	if err != nil {
		return nil, err
	}
	return &ServiceContext{
		Config:         c,
		MerchantClaim:  middleware.NewMerchantClaimMiddleware().Handle,
		BuyerClaim:     middleware.NewBuyerClaimMiddleware().Handle,
		RpcClient:      cli,
		Inventory:      inventoryclient.NewInventory(cli),
		Keys:           keys,
		Limiter:        limiter,
		LimiterFailure: middleware.FailurePolicy{Closed: c.LimiterFailure == config.FailClosed},
		AddrReserve:    addrReserve,
		AddrAuthFail:   addrAuthFail,
	}, nil
}
