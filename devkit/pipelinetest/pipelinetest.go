// Package pipelinetest assembles the whole sale in a test: a private redis-server (which
// the test may empty, kill and restart), the test's own MariaDB database, an in-process
// Kafka (kfake), the inventory service with its relay, and the writer, which the test can
// stop and start again.
package pipelinetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zeromicro/go-zero/core/conf"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/rpctest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/mq/mqserver"
	"github.com/seckill/seckill/rpc/inventoryclient"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// Options shape a pipeline.
type Options struct {
	Persistence devenv.Persistence // of the private Redis; default AOF everysec
	GraceSecs   int64              // Stock.GraceSeconds; default 60 (its minimum)
	// Inventory changes the inventory service's config (nil: as here), e.g. degrade mode.
	Inventory func(*rpcserver.Config)
	// Auth puts Redis behind an ACL user (the default user off) and Kafka behind SASL/SCRAM,
	// and configures the services with their credentials as deploy/ does.
	Auth bool
}

// Credentials are the pipeline's Redis ACL user and Kafka SASL user (Options.Auth).
type Credentials struct {
	RedisUser, RedisPass string
	Kafka                kafkax.Auth
}

// Pipeline is a running system.
type Pipeline struct {
	t       testing.TB
	Redis   *devenv.Proc
	RDS     *redis.Redis // a client of the private Redis
	Keys    stock.Keys
	Store   *stock.Store
	DB      *testenv.Database
	Brokers []string
	Group   string // the writer's consumer group
	// EventKey signs the relay's events and is checked by the writer (kafkax.Signer).
	EventKey string
	// Creds are what the services authenticate with (Options.Auth; zero: nothing).
	Creds  Credentials
	Inv    inventoryclient.Inventory
	RPC    rpcserver.Config
	Server *rpcserver.Server

	mu     sync.Mutex
	writer *mqserver.Server
	done   chan struct{}
}

// Start runs the system until the test ends; the writer is running.
func Start(t testing.TB, o Options) *Pipeline {
	t.Helper()
	if o.Persistence == "" {
		o.Persistence = devenv.PersistEverysec
	}
	if o.GraceSecs == 0 {
		o.GraceSecs = 60
	}
	testenv.Need(t, devenv.RedisPackage)
	p := &Pipeline{t: t, DB: testenv.MySQL(t), Group: testenv.RandomName("writer-"), EventKey: testenv.RandomSecret(),
		Keys: stock.Keys{Prefix: testenv.RandomName("pl") + ":"}}
	var err error
	if o.Auth {
		p.Creds = Credentials{RedisUser: "rpc", RedisPass: testenv.RandomSecret(), Kafka: kafkax.Auth{
			Mechanism: "SCRAM-SHA-512", User: "seckill", Pass: testenv.RandomSecret()}}
		p.Redis, err = devenv.StartRedisACL(context.Background(), p.Creds.RedisUser, p.Creds.RedisPass)
		p.Brokers = startKafka(t, kfake.EnableSASL(), kfake.Superuser(p.Creds.Kafka.Mechanism, p.Creds.Kafka.User,
			p.Creds.Kafka.Pass))
	} else {
		p.Redis, err = devenv.StartRedisPersist(context.Background(), o.Persistence)
		p.Brokers = testenv.Kafka(t, 4)
	}
	if err != nil {
		t.Fatal(err)
	}
	proc := p.Redis
	t.Cleanup(func() { _ = p.Redis.Close() })
	rc := testenv.RedisConf()
	rc.Host, rc.User, rc.Pass = proc.Addr, p.Creds.RedisUser, p.Creds.RedisPass
	p.RDS = redis.MustNewRedis(rc)
	p.Store = stock.NewStore(p.RDS, p.Keys)

	c := rpctest.Config(t, p.Keys, p.DB.DSN)
	c.StockRedis.Host, c.StockRedis.User, c.StockRedis.Pass = proc.Addr, p.Creds.RedisUser, p.Creds.RedisPass
	c.Relay.Brokers, c.Relay.EventKey, c.Relay.Kafka = p.Brokers, p.EventKey, p.Creds.Kafka
	c.Reconcile.WriterGroup = p.Group
	c.Reconcile.ConfirmAfter = 500 * time.Millisecond
	c.Stock.GraceSeconds = o.GraceSecs
	c.Stock.BackfillWaitMs = 200
	c.Stock.RebuildLeaseSeconds = 3
	if o.Inventory != nil {
		o.Inventory(&c)
	}
	p.RPC = c
	p.Inv, p.Server = rpctest.Start(t, c)
	p.StartWriter()
	t.Cleanup(p.StopWriter)
	return p
}

// startKafka starts a kfake broker with the event topics (4 partitions) and opts until the test ends.
func startKafka(t testing.TB, opts ...kfake.Opt) []string {
	k, err := devenv.StartKafka("", "", 4, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	return k.Addrs
}

// WriterConfig is the writer's configuration (no jobs).
func (p *Pipeline) WriterConfig() mqserver.Config {
	var c mqserver.Config
	if err := conf.FillDefault(&c); err != nil {
		p.t.Fatal(err)
	}
	c.Name, c.Mode = "mq-pipeline-test", "test"
	c.DevServer.Enabled, c.Consumer.DevServer.Enabled = false, false
	c.Log.Mode, c.Log.Encoding, c.Log.Level = "console", "plain", "severe"
	c.Consumer.Name = "mq-pipeline-test-writer"
	c.Consumer.Brokers, c.Consumer.Group, c.Consumer.Topic = p.Brokers, p.Group, event.Topic
	c.DeadLetter.Topic = event.DeadLetterTopic
	c.Consumer.Offset, c.Consumer.MinBytes, c.Consumer.Conns = "first", 1, 4
	c.Mysql.DataSource = p.DB.DSN
	c.EventKey, c.Kafka = p.EventKey, p.Creds.Kafka
	return c
}

// StartWriter starts the writer (a no-op while it runs).
func (p *Pipeline) StartWriter() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.writer != nil {
		return
	}
	w, err := mqserver.New(p.WriterConfig())
	if err != nil {
		p.t.Fatal(err)
	}
	p.writer, p.done = w, make(chan struct{})
	go func(done chan struct{}) { defer close(done); w.Start() }(p.done)
}

// StopWriter stops the writer (a no-op while it is stopped).
func (p *Pipeline) StopWriter() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.writer == nil {
		return
	}
	p.writer.Stop()
	<-p.done
	p.writer = nil
}

// Activity creates a live activity in MySQL and warms it; it returns its id.
func (p *Pipeline) Activity(total, limit, payTimeout int64, start, end time.Time) int64 {
	p.t.Helper()
	ctx := context.Background()
	a, err := p.Inv.CreateActivity(ctx, &inventoryclient.CreateActivityReq{MerchantId: 1, SkuId: 7, Name: "pipeline",
		Total: total, StartTime: start.Unix(), EndTime: end.Unix(), PerUserLimit: limit, PayTimeoutSeconds: payTimeout})
	if err != nil {
		p.t.Fatal(err)
	}
	id := a.GetActivity().GetActivityId()
	// BUSY is retried with the same call, as docs/API.md tells a client to.
	if _, err := Retry(p.t, 10*time.Second, func() (*inventoryclient.WarmupResp, error) {
		return p.Inv.Warmup(ctx, &inventoryclient.WarmupReq{ActivityId: id})
	}); err != nil {
		p.t.Fatal(err)
	}
	return id
}

// Drain waits until the outbox is empty and reconciliation says consistent.
func (p *Pipeline) Drain(aid int64, limit time.Duration) *inventoryclient.ReconcileResp {
	p.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		r, err := p.Inv.Reconcile(context.Background(), &inventoryclient.ReconcileReq{ActivityId: aid})
		if err == nil && r.Status == "consistent" {
			return r
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("activity %d not consistent after %v: %+v %v", aid, limit, r, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// OutboxEmpty waits until the relay moved every outbox entry of aid to Kafka.
func (p *Pipeline) OutboxEmpty(aid int64, limit time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		v, err := p.RDS.Eval("return redis.call('XLEN', KEYS[1])", []string{p.Keys.Events(aid)})
		n, _ := v.(int64)
		if err == nil && n == 0 {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("outbox of %d: %d entries after %v (%v)", aid, n, limit, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// RedisSales returns the reservations of activity aid that the Redis book made, as the relay put
// them on Kafka: order number → when Redis sold it, by Redis's clock (the MySQL book writes no events).
func (p *Pipeline) RedisSales(aid int64) map[string]time.Time {
	p.t.Helper()
	p.OutboxEmpty(aid, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := kafkax.NewProgress(p.Brokers, event.Topic, p.Group).Ends(ctx)
	if err != nil {
		p.t.Fatal(err)
	}
	left := map[int32]int64{} // partition → its end offset, until read up to it
	for part, end := range ends {
		if end > 0 {
			left[int32(part)] = end
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.Brokers...), kgo.ConsumeTopics(event.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		p.t.Fatal(err)
	}
	defer cl.Close()
	out := map[string]time.Time{}
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			p.t.Fatalf("%s not read to its end in 30 s: %d partitions left", event.Topic, len(left))
		}
		for _, r := range fs.Records() {
			if end, ok := left[r.Partition]; ok && r.Offset+1 >= end {
				delete(left, r.Partition)
			}
			e, err := event.Unmarshal(r.Value)
			if err != nil {
				p.t.Fatalf("an event on %s: %v", event.Topic, err)
			}
			if e.Type == event.Reserved && e.ActivityID == aid {
				out[e.OrderNo] = time.UnixMilli(e.AtMs)
			}
		}
	}
	return out
}

// Retry calls fn until it returns something other than BUSY (a rebuild in progress).
func Retry[T any](t testing.TB, limit time.Duration, fn func() (T, error)) (T, error) {
	t.Helper()
	deadline := time.Now().Add(limit)
	seen := map[string]int{} // each BUSY's message and how often: a last "breaker open" hides its cause
	for {
		v, err := fn()
		if c := xerr.FromStatus(err); err == nil || c.Code != xerr.Busy {
			return v, err
		}
		if _, ok := seen[err.Error()]; ok || len(seen) < 8 {
			seen[err.Error()]++
		}
		if time.Now().After(deadline) {
			return v, fmt.Errorf("still BUSY after %s; answers seen: %v", limit, seen)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Books describes activity aid's state for a failure message: its stock hash, its outbox's
// entries (at most 5, each cut at 160 bytes) and its MySQL inventory row, epochs included.
func (p *Pipeline) Books(aid int64) string {
	ctx := context.Background()
	var b strings.Builder
	h, err := p.RDS.HgetallCtx(ctx, p.Keys.Stock(aid))
	fmt.Fprintf(&b, "stock hash %v (%v); ", h, err)
	v, err := p.RDS.EvalCtx(ctx, "return redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 5)",
		[]string{p.Keys.Events(aid)})
	fmt.Fprintf(&b, "outbox %.800v (%v); ", v, err)
	row, err := model.NewInventoryModel(p.DB.Conn).FindOne(ctx, uint64(aid))
	fmt.Fprintf(&b, "mysql inventory %+v (%v)", row, err)
	return b.String()
}
