// Package config is the mq service's configuration (etc/mq.yaml).
package config

import (
	"github.com/zeromicro/go-queue/kq"
	"github.com/zeromicro/go-zero/core/service"
	"github.com/zeromicro/go-zero/core/stores/redis"
	"github.com/zeromicro/go-zero/zrpc"

	"github.com/seckill/seckill/internal/depwatch"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/rpctls"
	"github.com/seckill/seckill/mq/internal/consumer"
	"github.com/seckill/seckill/mq/internal/jobs"
	"github.com/seckill/seckill/mq/internal/writer"
)

type Config struct {
	service.ServiceConf
	// Consumer is the consumer group reading the events topic, in kq's config shape
	// (Brokers, Group, Topic, Offset, Conns, MinBytes, MaxBytes are used): Conns is the
	// number of group members in this process (mq/internal/consumer).
	Consumer kq.KqConf
	// Kafka is the SASL and TLS every Kafka client of the service connects with (the
	// consumer group, the dead-letter producer, the progress and lag reads).
	Kafka kafkax.Auth `json:",optional"`
	// EventKey checks every event's HMAC (kafkax.HeaderMAC) before the writer applies it:
	// one without a valid HMAC is dead-lettered (kind forged). The inventory's Relay.EventKey,
	// from the environment (${SECKILL_EVENT_KEY}); required in pro mode. Empty: not checked.
	EventKey string `json:",optional"`
	// Fetch tunes the members: uncommitted messages in flight, fetch wait.
	Fetch consumer.Conf
	Mysql struct {
		DataSource string // needs parseTime=true
	}
	Writer writer.Conf
	// Outbox is the inventory's Redis (its StockRedis and KeyPrefix): a rejected event
	// past Writer.PoisonAfter is dead-lettered only once its activity's outbox stream holds
	// no older change and the group has consumed what was on the topic then
	// (mq/internal/await). Without Redis.Host it is dead-lettered after PoisonAfter alone.
	Outbox struct {
		Redis     redis.RedisConf `json:",optional"`
		KeyPrefix string          `json:",optional"`
	} `json:",optional"`
	// DeadLetter is where events the writer cannot apply go (Brokers: the Consumer's when
	// empty). Topic is required: the name is spelled in the config files and, in Go, only
	// as event.DeadLetterTopic.
	DeadLetter struct {
		Brokers []string `json:",optional"`
		Topic   string
	}
	// Inventory is the inventory service the jobs call (expire_due, reconcile, warm-up).
	// Without Endpoints, Target or Etcd no job runs.
	Inventory zrpc.RpcClientConf `json:",optional"`
	// InventoryTLS: the CA the inventory service's certificate is checked with (its TLS).
	InventoryTLS rpctls.ClientConf `json:",optional"`
	// Jobs: expiry, reconciliation and scheduled warm-up (mq/internal/jobs).
	Jobs jobs.Conf `json:",optional"`
	// Probe: how often MySQL and Kafka are probed (seckill_dependency_up).
	Probe depwatch.Conf
}
