// Package mqserver builds the mq service: the consumer group feeding the order writer,
// and the jobs. The mq main and the standalone launcher both use it.
package mqserver

import (
	"context"

	"github.com/zeromicro/go-zero/core/conf"
	"github.com/zeromicro/go-zero/core/queue"
	"github.com/zeromicro/go-zero/core/service"
	"github.com/zeromicro/go-zero/core/stores/redis"
	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/internal/buildinfo"
	"github.com/seckill/seckill/internal/depwatch"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/mq/internal/await"
	"github.com/seckill/seckill/mq/internal/config"
	"github.com/seckill/seckill/mq/internal/consumer"
	"github.com/seckill/seckill/mq/internal/svc"
	"github.com/seckill/seckill/mq/internal/writer"
)

// Config is the mq service's configuration (etc/mq.yaml).
type Config = config.Config

// ServiceContext is what the service holds for its lifetime.
type ServiceContext = svc.ServiceContext

// LoadConfig reads a config file, applying go-zero defaults; ${VAR} in the file is
// replaced by the environment variable VAR (secrets, passwords).(kq's Conns, Offset, ... only
// get their defaults through the loader).
func LoadConfig(file string) (Config, error) {
	var c Config
	err := conf.Load(file, &c, conf.UseEnv())
	return c, err
}

// Server is the consumer group, the writer and the service's background work.
type Server struct {
	Svc   *ServiceContext
	group *service.ServiceGroup
}

// New builds the service. A Config built in code must pass through conf.FillDefault first.
func New(c Config) (*Server, error) {
	buildinfo.Register() // seckill_build_info{version,commit}
	return newServer(c, nil)
}

// newServer lets tests wrap the handler (to crash it at a chosen point).
func newServer(c Config, wrap func(consumer.Handler) consumer.Handler) (*Server, error) {
	if err := c.SetUp(); err != nil { // logging and metrics as the top-level config says
		return nil, err
	}
	// The writer runs thousands of statements a second; go-zero logs each at info level.
	// Slow statements are still logged. (Process-wide: sqlx has no per-connection switch.)
	sqlx.DisableStmtLog()
	ctx, err := svc.New(c)
	if err != nil {
		return nil, err
	}
	var h consumer.Handler = ctx.Writer
	if wrap != nil {
		h = wrap(h)
	}
	// Not kq: its handler-per-message model holds a batch to NumCPU events in order
	// (mq/internal/consumer). The members hand messages to the writer without waiting
	// and commit each partition's offsets in order once MySQL has everything before them.
	dialer, err := c.Kafka.Dialer()
	if err != nil {
		return nil, err
	}
	opts := []consumer.Option{consumer.WithDialer(dialer)}
	if signer := kafkax.NewSigner(c.EventKey); signer != nil {
		opts = append(opts, consumer.WithVerify(signer.Verify)) // a forged event goes to Reject
	}
	q, err := consumer.New(c.Consumer, c.Fetch, h, opts...)
	if err != nil {
		return nil, err
	}
	progress, err := newProgress(c)
	if err != nil {
		return nil, err
	}
	if c.Outbox.Redis.Host != "" {
		// A rejected event is not dead-lettered while what it may wait for can still arrive.
		rc := c.Outbox.Redis
		rc.NonBlock = true // the writer starts without Redis; parked events then stay parked
		rds, err := redis.NewRedis(rc)
		if err != nil {
			return nil, err
		}
		outbox := stock.NewStore(rds, stock.Keys{Prefix: c.Outbox.KeyPrefix}).Outbox()
		ctx.Writer.Awaited = await.New(outbox, progress, q.Handed).Awaited
	}
	group := service.NewServiceGroup()
	group.Add(&pipeline{consumer: q, svc: ctx})
	group.Add(depwatch.New(c.Probe, "mq",
		depwatch.Probe{Dependency: "mysql", Check: func(pctx context.Context) error {
			db, err := ctx.DB.RawDB()
			if err != nil {
				return err
			}
			return db.PingContext(pctx)
		}},
		depwatch.Probe{Dependency: "kafka", Check: func(pctx context.Context) error {
			_, err := progress.Ends(pctx)
			return err
		}}))
	lag, err := newProgress(c) // a client of its own, as the probe and the await check have
	if err != nil {
		return nil, err
	}
	group.Add(writer.NewLagWatch(lag, c.Writer.LagInterval))
	for _, j := range newJobs(c, ctx) {
		group.Add(j)
	}
	return &Server{Svc: ctx, group: group}, nil
}

// newProgress reads the writer group's progress through Kafka as c.Kafka says.
func newProgress(c Config) (*kafkax.Progress, error) {
	return kafkax.NewProgress(c.Consumer.Brokers, c.Consumer.Topic, c.Consumer.Group).WithAuth(c.Kafka)
}

// Add adds background work (the jobs) to the server's group; call before Start.
func (s *Server) Add(svc service.Service) { s.group.Add(svc) }

// Start runs until Stop; it blocks.
func (s *Server) Start() { s.group.Start() }

// Stop stops consuming, then the writer.
func (s *Server) Stop() { s.group.Stop() }

// pipeline is the consumer and the writer, stopped in the one safe order: the consumer
// first (no offset is committed after that), then the writer, whose unfinished events are
// answered "stopped" and come again after a restart.
type pipeline struct {
	consumer queue.MessageQueue
	svc      *ServiceContext
}

func (p *pipeline) Start() {
	go p.svc.Writer.Start()
	p.consumer.Start()
}

// Stop stops the consumer, then the writer: its unfinished events are not committed and
// come again after a restart; none of that is logged as an error.
func (p *pipeline) Stop() {
	p.consumer.Stop()
	p.svc.Writer.Stop()
	_ = p.svc.DeadLetter.Close()
}
