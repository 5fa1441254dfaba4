package config

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/zeromicro/go-zero/core/stores/redis"
	"github.com/zeromicro/go-zero/rest"
	"github.com/zeromicro/go-zero/zrpc"

	"github.com/seckill/seckill/api/internal/coalesce"
	"github.com/seckill/seckill/api/internal/edge"
	"github.com/seckill/seckill/internal/rpctls"
	"github.com/seckill/seckill/internal/secrets"
)

// Environment variables that carry the JWT secrets (they override SecretsFile and, outside
// pro mode, the config file).
const (
	EnvBuyerSecret    = "SECKILL_BUYER_SECRET"
	EnvMerchantSecret = "SECKILL_MERCHANT_SECRET"
	// EnvPaymentSecret carries the payment provider's signing secret (PaymentAuth.Secret).
	EnvPaymentSecret = "SECKILL_PAYMENT_SECRET"
)

type Config struct {
	rest.RestConf
	BuyerAuth    AuthConf // tokens with claim uid
	MerchantAuth AuthConf // tokens with claim mid
	// Inventory is the inventory zRPC service: Endpoints for direct dialing, or Etcd.
	Inventory zrpc.RpcClientConf
	// InventoryTLS: the CA the inventory service's certificate is checked with (its TLS).
	InventoryTLS rpctls.ClientConf `json:",optional"`
	// Redis is the inventory's Redis: the gateway subscribes to its stock-back channel
	// (Edge) and, with RateLimit.Shared, counts the per-user limit there. Set
	// DisableIdentity on Redis < 7.2.
	Redis redis.RedisConf
	// KeyPrefix namespaces the limiter's keys (same meaning as the rpc's KeyPrefix).
	KeyPrefix string `json:",optional"`
	RateLimit RateLimitConf
	// Edge: the gateway's own SOLD_OUT / NOT_STARTED / ENDED answers (api/internal/edge).
	Edge edge.Conf
	// Coalesce: per activity, at most InFlight ReserveBatch calls, each of at most MaxBatch
	// reservations (what queued while the others were in flight).
	Coalesce coalesce.Conf
	// AddrLimit limits per client address (reservations, failed authentications).
	AddrLimit AddrLimitConf
	// MerchantLimit limits each merchant's writes and heavy reads (reconcile), counted in
	// Redis across every gateway; a refusal is 429 RATE_LIMITED with Retry-After: Period.
	MerchantLimit MerchantLimitConf
	// LimiterFailure: when a limiter's Redis fails, "open" lets the request through (and
	// counts it in seckill_api_limiter_failures_total), "closed" answers 503 BUSY.
	LimiterFailure string `json:",default=open,options=open|closed"`
	// SecretsFile, when set, is a KEY=VALUE file (SECKILL_BUYER_SECRET=…,
	// SECKILL_MERCHANT_SECRET=…, SECKILL_PAYMENT_SECRET=…) outside any source checkout, mode
	// 0600 or stricter.
	SecretsFile string `json:",optional"`
	// PaymentAuth: the secret the payment provider signs its notifications with
	// (POST /v1/payments/notify); unset, every notification is refused 401.
	PaymentAuth PaymentAuthConf `json:",optional"`
	// Pay: who may confirm a payment.
	Pay PayConf
	// Orders: the merchant's orders list (GET /v1/admin/activities/{id}/orders).
	Orders OrdersConf
}

// WriteTimeout is the gateway's http.Server WriteTimeout: 11/10 of its longest route timeout
// (the reconcile route's 70s in api/seckill.api), as go-zero sets it, which go-zero no longer
// does once a route has no timeout (the orders route).
const WriteTimeout = 77 * time.Second

// MaxExportTimeout bounds Orders.ExportTimeout: an export must end (whole, or broken) before
// WriteTimeout cuts its connection.
const MaxExportTimeout = 65 * time.Second

// OrdersConf: ExportTimeout bounds one CSV export (its ExportOrders stream); an export that
// outlasts it breaks its connection (docs/API.md).
type OrdersConf struct {
	ExportTimeout time.Duration `json:",default=60s"`
}

// PaymentAuthConf is the payment provider's HMAC-SHA256 secret, from SECKILL_PAYMENT_SECRET or
// SecretsFile (never the config file in pro mode).
type PaymentAuthConf struct {
	Secret string `json:",optional"`
}

// PayConf: BuyerConfirms lets a buyer confirm their own order's payment
// (POST /v1/seckill/orders/{order_no}/pay; demos and the load generator); false (deployments)
// leaves payment to the provider's notification and that route answers 403 FORBIDDEN.
type PayConf struct {
	BuyerConfirms bool `json:",default=true"`
}

// AuthConf is one JWT audience: its HS256 secret and the lifetime of minted tokens.
type AuthConf struct {
	AccessSecret string `json:",optional"`      // from the environment or SecretsFile
	AccessExpire int64  `json:",default=86400"` // seconds
}

// RateLimitConf limits reservations per buyer: at most Quota requests per Period seconds,
// counted in the gateway's memory (no Redis call per request). With Shared, a request
// that passes the local count is also counted in Redis (svc.SharedCounts, pipelined),
// so that a buyer's quota is shared by every gateway instance; without it each gateway
// counts alone (a buyer reaching k gateways gets k quotas; the inventory script's per-user
// limit still bounds what anyone can buy).
type RateLimitConf struct {
	Enabled bool `json:",default=true"`
	Period  int  `json:",default=1,range=[1:3600]"`
	Quota   int  `json:",default=5,range=[1:1000000]"`
	// ReadQuota limits a buyer's reads (activity, order), ChangeQuota its pays and cancels,
	// per Period, counted like Quota.
	ReadQuota   int  `json:",default=20,range=[1:1000000]"`
	ChangeQuota int  `json:",default=5,range=[1:1000000]"`
	Shared      bool `json:",default=false"`
}

// MerchantLimitConf is at most Quota counted merchant requests per Period seconds.
type MerchantLimitConf struct {
	Enabled bool `json:",default=true"`
	Period  int  `json:",default=1,range=[1:3600]"`
	Quota   int  `json:",default=10,range=[1:1000000]"`
}

// ApplyEnv overrides the secrets from the environment when set.
func (c *Config) ApplyEnv() {
	if v := os.Getenv(EnvBuyerSecret); v != "" {
		c.BuyerAuth.AccessSecret = v
	}
	if v := os.Getenv(EnvMerchantSecret); v != "" {
		c.MerchantAuth.AccessSecret = v
	}
	if v := os.Getenv(EnvPaymentSecret); v != "" {
		c.PaymentAuth.Secret = v
	}
}

// LoadSecrets applies SecretsFile and the environment (LoadConfig calls it). In pro mode
// a secret written in the config file itself is an error.
func (c *Config) LoadSecrets() error { return c.loadSecrets() }

// Validate rejects secrets that are missing, short, of low entropy or published in the
// repository, and configurations that would make tokens interchangeable.
func (c *Config) Validate() error {
	if err := CheckSecret("BuyerAuth.AccessSecret", c.BuyerAuth.AccessSecret); err != nil {
		return err
	}
	if err := CheckSecret("MerchantAuth.AccessSecret", c.MerchantAuth.AccessSecret); err != nil {
		return err
	}
	if c.BuyerAuth.AccessSecret == c.MerchantAuth.AccessSecret {
		return errors.New("config: BuyerAuth and MerchantAuth must use different secrets")
	}
	if t := c.Orders.ExportTimeout; t <= 0 || t > MaxExportTimeout {
		return fmt.Errorf("config: Orders.ExportTimeout must be within (0, %s]", MaxExportTimeout)
	}
	if p := c.PaymentAuth.Secret; p != "" {
		if err := secrets.Check("PaymentAuth.Secret", p); err != nil {
			return err
		}
		if p == c.BuyerAuth.AccessSecret || p == c.MerchantAuth.AccessSecret {
			return errors.New("config: PaymentAuth.Secret must differ from the JWT secrets")
		}
	}
	return nil
}
