package config

import (
	"github.com/zeromicro/go-zero/core/stores/redis"
	"github.com/zeromicro/go-zero/zrpc"

	"github.com/seckill/seckill/internal/depwatch"
	"github.com/seckill/seckill/internal/reconcile"
	"github.com/seckill/seckill/internal/relay"
	"github.com/seckill/seckill/internal/rpctls"
	"github.com/seckill/seckill/rpc/internal/degrade"
)

type Config struct {
	// Auth (zrpc, required in pro mode): every call must carry the App and Token of one of
	// Apps and name one of its Methods (rpcserver's authenticator, in place of go-zero's).
	zrpc.RpcServerConf
	Apps []AppToken `json:",optional"`
	// LegacyAppsHash writes Apps' tokens, in clear, to the StockRedis hash sk:rpc:apps for
	// instances of a version before the service's own authenticator (go-zero's reads the
	// hash and compares its value with the token sent): on only while a rolling upgrade
	// from such a version runs. Off, the service deletes the hash at start: no token in Redis.
	LegacyAppsHash bool `json:",optional"`
	// TLS: the certificate zRPC is served with (clients then dial with TLS); empty: plaintext.
	TLS rpctls.ServerConf `json:",optional"`
	// OrderKey tags every order number (HMAC-SHA256), so that a forged or random one is
	// refused by its shape before any read. Required in pro mode, from the environment
	// (${SECKILL_ORDER_KEY}); every instance needs the same one. Without it (dev, tests)
	// the tag is an unkeyed checksum.
	OrderKey string `json:",optional"`
	// StockRedis holds the inventory (node or cluster). Set DisableIdentity on Redis < 7.2.
	StockRedis redis.RedisConf
	// KeyPrefix namespaces every key (several deployments or tests on one Redis).
	KeyPrefix string `json:",optional"`
	Mysql     struct {
		DataSource string // needs parseTime=true
	}
	Stock StockConf
	// Degrade: what an activity does while its Redis is unreachable. off: BUSY until Redis
	// is back; mysql: degrade mode, served from MySQL (docs/DESIGN.md, "Degrade mode").
	// Every instance needs the same setting.
	Degrade string `json:",default=off,options=off|mysql"`
	// DegradeMode tunes degrade mode: the semaphore into MySQL, the lease of the fence.
	DegradeMode degrade.Conf `json:",optional"`
	// Relay moves the outbox streams to Kafka; it runs when Brokers is set.
	Relay relay.Conf
	// Reconcile tunes the Redis/MySQL comparison behind the Reconcile and Repair RPCs.
	Reconcile reconcile.Conf
	// Probe: how often Redis and MySQL are probed (seckill_dependency_up).
	Probe depwatch.Conf
	// Draw tunes the opening draw (docs/DESIGN.md, "The opening draw").
	Draw DrawConf `json:",optional"`
}

// DrawConf tunes the opening draw's runs.
type DrawConf struct {
	// Chunk: entrants served per reserve script call (at most stock.MaxReserveBatch).
	Chunk int `json:",default=512,range=[1:512]"`
	// LeaseSeconds: the drawer's lease, renewed every chunk; a dead drawer's is taken over
	// once it lapses.
	LeaseSeconds int `json:",default=3,range=[1:60]"`
	// EntriesPerAddress: the most entrants of one activity's draw from one client address
	// (as the gateway sends it; none from a gateway whose AddrLimit is off), counted in
	// Redis across every gateway; 0: no bound.
	EntriesPerAddress int `json:",default=20,range=[0:1000000]"`
}

type StockConf struct {
	// GraceSeconds: an activity's keys live this long after its last order falls due (end +
	// pay timeout): expiry, relay drain.
	GraceSeconds int64 `json:",default=86400,range=[1:2592000]"`
	// MissingTTLSeconds: how long "no such activity" is cached.
	MissingTTLSeconds int `json:",default=5,range=[1:3600]"`
	// BackfillWaitMs: how long a read waits for another caller's backfill before BUSY.
	BackfillWaitMs int `json:",default=1000,range=[10:10000]"`
	// RebuildLeaseSeconds: the lease of the lock one instance holds while it rebuilds an
	// activity Redis lost (renewed while it runs; taken over when a dead rebuilder's lapses).
	RebuildLeaseSeconds int `json:",default=10,range=[2:300]"`
	// ExpireBatch: default number of orders one ExpireDue call releases.
	ExpireBatch int `json:",default=200,range=[1:1000]"`
	// BloomBits sizes the Bloom filter of known activity ids (go-zero core/bloom, 14 hashes):
	// 2^24 bits (2 MiB) keep false positives around 0.01 % up to a million activities.
	BloomBits uint `json:",default=16777216,range=[1024:4294967296]"`
	// BloomRefreshMs: an id above the highest known one makes the filter read the ids
	// added since, at most once per BloomRefreshMs (activities written by other means).
	BloomRefreshMs int `json:",default=1000,range=[10:60000]"`
}
