package svc

import (
	"context"
	"strconv"
	"time"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/limit"
	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/redis"
	"github.com/zeromicro/go-zero/core/syncx"
	"github.com/zeromicro/go-zero/rest"
	"github.com/zeromicro/go-zero/zrpc"

	"github.com/seckill/seckill/api/internal/config"
	"github.com/seckill/seckill/api/internal/edge"
	"github.com/seckill/seckill/api/internal/middleware"
	"github.com/seckill/seckill/internal/authtoken"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// windowFetchTimeout bounds the background read of an activity's window.
const windowFetchTimeout = 2 * time.Second

// ServiceContext holds everything that outlives a request, created once.
type ServiceContext struct {
	Config        config.Config
	MerchantClaim rest.Middleware
	BuyerClaim    rest.Middleware
	// ReserveEdge answers a reservation from the Edge marks before the handler parses it.
	ReserveEdge rest.Middleware

	RpcClient zrpc.Client
	// Inventory is the inventory service: every read and write of activities and stock.
	Inventory inventoryclient.Inventory
	Keys      stock.Keys
	// Limiter counts reservations per buyer; nil when RateLimit.Enabled is false.
	Limiter *UserLimiter
	// LimiterFailure is what every limiter does when its Redis fails (LimiterFailure).
	LimiterFailure middleware.FailurePolicy
	// AddrReserve and AddrAuthFail count per client address (AddrLimit); nil when disabled.
	AddrReserve  *AddrLimiter
	AddrAuthFail *limit.PeriodLimit
	// Edge holds the sold-out marks and known windows; nil when Edge.Enabled is false.
	Edge *edge.Marks

	windows syncx.SingleFlight
	sub     red.UniversalClient
	stop    context.CancelFunc
	stopped <-chan struct{}
}

// New builds the context: the zRPC client of the inventory service (which owns the
// activities; the gateway holds no database handle), the per-user limiter and the
// sold-out marks with their stock-back subscription.
func New(c config.Config) (*ServiceContext, error) {
	// go-zero's duration interceptor logs every non-OK reply at error level, sold-outs
	// included; ours logs only real failures and slow calls.
	c.Inventory.Middlewares.Duration = false
	opts, err := c.InventoryTLS.Options()
	if err != nil {
		return nil, err
	}
	cli, err := zrpc.NewClient(c.Inventory, append(opts, zrpc.WithUnaryClientInterceptor(xerr.UnaryClientInterceptor))...)
	if err != nil {
		return nil, err
	}
	keys := stock.Keys{Prefix: c.KeyPrefix}
	var limiter *UserLimiter
	if c.RateLimit.Enabled {
		var shared *limit.PeriodLimit
		if c.RateLimit.Shared {
			rds, err := redis.NewRedis(c.Redis)
			if err != nil {
				return nil, err
			}
			// The key is complete already (stock.Keys builds it), so no extra prefix.
			shared = limit.NewPeriodLimit(c.RateLimit.Period, c.RateLimit.Quota, rds, "")
		}
		limiter = NewUserLimiter(c.RateLimit.Period, c.RateLimit.Quota, shared, keys)
	}
	addrReserve, addrAuthFail, err := addrLimiters(c, keys)
	if err != nil {
		return nil, err
	}
	buyers := middleware.NewTokenAuth(c.BuyerAuth.AccessSecret, authtoken.BuyerClaim, 0)
	s := &ServiceContext{
		Config:         c,
		MerchantClaim:  middleware.NewMerchantClaimMiddleware().Handle,
		BuyerClaim:     middleware.NewBuyerClaimMiddleware(buyers).Handle,
		RpcClient:      cli,
		Inventory:      inventoryclient.NewInventory(cli),
		Keys:           keys,
		Limiter:        limiter,
		LimiterFailure: middleware.FailurePolicy{Closed: c.LimiterFailure == config.FailClosed},
		AddrReserve:    addrReserve,
		AddrAuthFail:   addrAuthFail,
		windows:        syncx.NewSingleFlight(),
	}
	if c.Edge.Enabled {
		s.Edge = edge.New(c.Edge)
		s.sub = edge.NewClient(c.Redis)
		ctx, cancel := context.WithCancel(context.Background())
		s.stop = cancel
		// Waits for the first subscription (bounded), so that a gateway that serves has
		// subscribed; if Redis is down it serves anyway and the marks' TTL bounds them.
		sctx, scancel := context.WithTimeout(ctx, 3*time.Second)
		s.stopped = edge.Subscribe(ctx, s.sub, keys.StockBack(), s.Edge, sctx.Done())
		scancel()
	}
	s.ReserveEdge = middleware.NewReserveEdgeMiddleware(s.Edge).Handle
	return s, nil
}

// LearnWindow reads aid's window from the inventory service in the background (one
// read per activity at a time), for the edge's NOT_STARTED / ENDED answers.
func (s *ServiceContext) LearnWindow(aid int64) {
	if s.Edge == nil || s.Edge.HasWindow(aid) {
		return
	}
	go func() {
		_, _ = s.windows.Do(strconv.FormatInt(aid, 10), func() (any, error) {
			ctx, cancel := context.WithTimeout(context.Background(), windowFetchTimeout)
			defer cancel()
			res, err := s.Inventory.GetStock(ctx, &inventoryclient.GetStockReq{ActivityId: aid})
			if err != nil {
				logx.Infof("edge: window of activity %d: %v", aid, err)
				return nil, err
			}
			if a := res.GetActivity(); a != nil && a.GetEndTime() > a.GetStartTime() {
				s.Edge.Window(aid, a.GetStartTime(), a.GetEndTime())
			}
			return nil, nil
		})
	}()
}

// Close stops the stock-back subscription and closes the zRPC connection.
func (s *ServiceContext) Close() {
	if s.stop != nil {
		s.stop()
		<-s.stopped
		_ = s.sub.Close()
	}
	_ = s.RpcClient.Conn().Close()
}
