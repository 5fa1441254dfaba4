package svc

import (
	"context"

	"github.com/zeromicro/go-zero/core/limit"
	"github.com/zeromicro/go-zero/rest"
	"github.com/zeromicro/go-zero/zrpc"

	"github.com/seckill/seckill/api/gatekeys"
	"github.com/seckill/seckill/api/internal/coalesce"
	"github.com/seckill/seckill/api/internal/config"
	"github.com/seckill/seckill/api/internal/edge"
	"github.com/seckill/seckill/api/internal/middleware"
	"github.com/seckill/seckill/api/internal/reserve"
	"github.com/seckill/seckill/internal/authtoken"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// ServiceContext holds everything that outlives a request, created once.
type ServiceContext struct {
	Config        config.Config
	MerchantClaim rest.Middleware
	// Idempotency answers a repeated Idempotency-Key of a merchant's write (after MerchantClaim).
	Idempotency rest.Middleware
	// BuyerJWT authenticates the buyer routes (Pipeline.Authenticated); Reserve runs the
	// reservation route's stages (Pipeline.Route).
	BuyerJWT, Reserve rest.Middleware
	// PaymentSignature lets through only notifications the payment provider signed.
	PaymentSignature rest.Middleware
	// Pipeline is the reservation route, in front of go-zero's router and on the route.
	Pipeline *reserve.Pipeline

	RpcClient zrpc.Client
	// Inventory is the inventory service: every read and write of activities and stock.
	Inventory inventoryclient.Inventory
	// Reservations sends reservations to Inventory coalesced per activity (ReserveBatch,
	// coalesce.Coalescer); nil when Coalesce.Enabled is false.
	Reservations Coalescer
	Keys         stock.Keys
	// Limiter counts reservations per buyer, ReadLimiter reads, ChangeLimiter pays and
	// cancels (in memory); nil when RateLimit.Enabled is false.
	Limiter, ReadLimiter, ChangeLimiter *UserLimiter
	// LimiterFailure is what every limiter does when its Redis fails (LimiterFailure).
	LimiterFailure middleware.FailurePolicy
	// ClientIP reads a request's client address (AddrLimit's ClientIPHeader, TrustedProxies).
	ClientIP middleware.ClientIP
	// AddrReserve and AddrAuthFail count per client address (AddrLimit); nil when disabled.
	AddrReserve  *AddrLimiter
	AddrAuthFail *limit.PeriodLimit
	// Edge is the reservation route's marks (sold-out, known windows; none when Edge.Enabled
	// is false).
	Edge *edge.Gate
	// Health is the cached dependency status /healthz and the admin view read.
	Health *Health
}

// A Coalescer sends a reservation with its activity's others (coalesce.Coalescer).
type Coalescer interface {
	Reserve(ctx context.Context, aid int64, it *inventoryclient.ReserveItem) (*inventoryclient.ReserveResp, error)
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
	gate := gatekeys.Keys{Prefix: c.KeyPrefix}
	counts, err := newSharedCounts(c)
	if err != nil {
		return nil, err
	}
	var limiter, reads, changes *UserLimiter
	if c.RateLimit.Enabled {
		var shared *SharedCounts
		if c.RateLimit.Shared {
			shared = counts
		}
		limiter = NewUserLimiter(c.RateLimit.Period, c.RateLimit.Quota, shared, gate)
		reads = NewUserLimiter(c.RateLimit.Period, c.RateLimit.ReadQuota, nil, gate)
		changes = NewUserLimiter(c.RateLimit.Period, c.RateLimit.ChangeQuota, nil, gate)
	}
	addrReserve, addrAuthFail, err := addrLimiters(c, gate, counts)
	if err != nil {
		return nil, err
	}
	clientIP, err := middleware.NewClientIP(c.AddrLimit.ClientIPHeader, c.AddrLimit.TrustedProxies)
	if err != nil {
		return nil, err
	}
	merchantLimit, err := newMerchantLimit(c, gate)
	if err != nil {
		return nil, err
	}
	idem, err := newIdempotency(c, gate)
	if err != nil {
		return nil, err
	}
	inv := inventoryclient.NewInventory(cli)
	s := &ServiceContext{
		Config:           c,
		MerchantClaim:    middleware.NewMerchantClaimMiddleware(merchantLimit).Handle,
		Idempotency:      idem.Handle,
		PaymentSignature: middleware.NewPaymentSignatureMiddleware(c.PaymentAuth.Secret).Handle,
		RpcClient:        cli,
		Inventory:        inv,
		Keys:             keys,
		Limiter:          limiter,
		ReadLimiter:      reads,
		ChangeLimiter:    changes,
		LimiterFailure:   middleware.FailurePolicy{Closed: c.LimiterFailure == config.FailClosed},
		ClientIP:         clientIP,
		AddrReserve:      addrReserve,
		AddrAuthFail:     addrAuthFail,
		Health:           NewHealth(inv),
	}
	if c.Coalesce.Enabled {
		s.Reservations = coalesce.New(c.Coalesce, inv)
	}
	var marks *edge.Marks
	if c.Edge.Enabled {
		marks = edge.New(c.Edge)
	}
	s.Edge = edge.NewGate(marks, s.Inventory)
	s.Edge.Connect(c.Redis, keys)
	s.Pipeline = newPipeline(c, s, middleware.NewTokenAuth(c.BuyerAuth.AccessSecret, authtoken.BuyerClaim, 0))
	s.BuyerJWT, s.Reserve = s.Pipeline.Authenticated, s.Pipeline.Route
	return s, nil
}

// Close stops the stock-back subscription and closes the zRPC connection.
func (s *ServiceContext) Close() {
	s.Edge.Close()
	_ = s.RpcClient.Conn().Close()
}

// newPipeline builds the reservation route's pipeline from s's parts, authenticating buyers
// with buyers.
func newPipeline(c config.Config, s *ServiceContext, buyers *middleware.TokenAuth) *reserve.Pipeline {
	st := reserve.Stages{Authenticate: buyers.Verify, Decode: edge.Decode, Failure: s.LimiterFailure,
		Gate: s.Edge}
	if c.AddrLimit.Enabled { // the inventory service bounds a draw's entrants per address
		st.ClientAddr = s.ClientIP.Addr
	}
	if s.AddrReserve != nil { // a nil pointer in the interface would not be nil
		st.AddrQuota = s.AddrReserve
	}
	if s.Limiter != nil {
		st.UserQuota = s.Limiter
	}
	return reserve.New(st, reserve.Front{Answer: c.Edge.Enabled && c.Edge.FastPath, MaxBytes: c.MaxBytes,
		Trace: c.Middlewares.Trace, Name: c.Name, Log: c.Middlewares.Log})
}
