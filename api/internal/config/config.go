package config

import (
	"errors"
	"os"

	"github.com/zeromicro/go-zero/core/stores/redis"
	"github.com/zeromicro/go-zero/rest"
	"github.com/zeromicro/go-zero/zrpc"

	"github.com/seckill/seckill/api/internal/edge"
)

// Environment variables that override the JWT secrets of etc/seckill-api.yaml, so that
// real secrets need not live in the file.
const (
	EnvBuyerSecret    = "SECKILL_BUYER_SECRET"
	EnvMerchantSecret = "SECKILL_MERCHANT_SECRET"
)

type Config struct {
	rest.RestConf
	BuyerAuth    AuthConf // tokens with claim uid
	MerchantAuth AuthConf // tokens with claim mid
	// Inventory is the inventory zRPC service: Endpoints for direct dialing, or Etcd.
	Inventory zrpc.RpcClientConf
	// Redis is the inventory's Redis: the gateway subscribes to its stock-back channel
	// (Edge) and, with RateLimit.Shared, counts the per-user limit there. Set
	// DisableIdentity on Redis < 7.2.
	Redis redis.RedisConf
	// KeyPrefix namespaces the limiter's keys (same meaning as the rpc's KeyPrefix).
	KeyPrefix string `json:",optional"`
	RateLimit RateLimitConf
	// Edge: the gateway's own SOLD_OUT / NOT_STARTED / ENDED answers (api/internal/edge).
	Edge edge.Conf
}

// AuthConf is one JWT audience: its HS256 secret and the lifetime of minted tokens.
type AuthConf struct {
	AccessSecret string
	AccessExpire int64 `json:",default=86400"` // seconds
}

// RateLimitConf limits reservations per buyer: at most Quota requests per Period seconds,
// counted in the gateway's memory (no Redis call per request). With Shared, a request
// that passes the local count is also counted in Redis (go-zero core/limit PeriodLimit),
// so that a buyer's quota is shared by every gateway instance; without it each gateway
// counts alone (a buyer reaching k gateways gets k quotas; the inventory script's per-user
// limit still bounds what anyone can buy).
type RateLimitConf struct {
	Enabled bool `json:",default=true"`
	Period  int  `json:",default=1,range=[1:3600]"`
	Quota   int  `json:",default=5,range=[1:1000000]"`
	Shared  bool `json:",default=false"`
}

// ApplyEnv overrides the secrets from the environment when set.
func (c *Config) ApplyEnv() {
	if v := os.Getenv(EnvBuyerSecret); v != "" {
		c.BuyerAuth.AccessSecret = v
	}
	if v := os.Getenv(EnvMerchantSecret); v != "" {
		c.MerchantAuth.AccessSecret = v
	}
}

// Validate rejects configurations that would make tokens interchangeable.
func (c *Config) Validate() error {
	if len(c.BuyerAuth.AccessSecret) < 16 || len(c.MerchantAuth.AccessSecret) < 16 {
		return errors.New("config: BuyerAuth and MerchantAuth secrets must be at least 16 bytes")
	}
	if c.BuyerAuth.AccessSecret == c.MerchantAuth.AccessSecret {
		return errors.New("config: BuyerAuth and MerchantAuth must use different secrets")
	}
	return nil
}
