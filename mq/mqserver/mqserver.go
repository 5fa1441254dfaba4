// Package mqserver builds the mq service: the kq consumer group feeding the order writer
// (and, later, the jobs). The mq main and the standalone launcher both use it.
package mqserver

import (
	"context"
	"time"

	"github.com/zeromicro/go-queue/kq"
	"github.com/zeromicro/go-zero/core/conf"
	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/queue"
	"github.com/zeromicro/go-zero/core/service"
	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/internal/depwatch"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/mq/internal/config"
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
	return newServer(c, nil)
}

// newServer lets tests wrap the handler (to crash it at a chosen point).
func newServer(c Config, wrap func(kq.ConsumeHandler) kq.ConsumeHandler) (*Server, error) {
	// kq's default (CommitInOrder false) runs Processors in parallel and commits each
	// message's offset as its handler returns: a later offset then covers an earlier event
	// still waiting for its transaction, and a crash in between loses it. In order, an
	// offset is committed only after every earlier message of the reader was handled.
	c.Consumer.CommitInOrder = true
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
	var h kq.ConsumeHandler = ctx.Writer
	if wrap != nil {
		h = wrap(h)
	}
	q, err := kq.NewQueue(c.Consumer, h, kq.WithErrorHandler(consumeError))
	if err != nil {
		return nil, err
	}
	group := service.NewServiceGroup()
	group.Add(&pipeline{consumer: q, svc: ctx, consumed: make(chan struct{}), level: logLevel(c.Log.Level)})
	progress := kafkax.NewProgress(c.Consumer.Brokers, c.Consumer.Topic, c.Consumer.Group)
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
	group.Add(writer.NewLagWatch(c.Consumer.Brokers, c.Consumer.Topic, c.Consumer.Group, c.Writer.LagInterval))
	for _, j := range newJobs(c, ctx) {
		group.Add(j)
	}
	return &Server{Svc: ctx, group: group}, nil
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
	consumed chan struct{} // closed when the consumer's Start returned
	level    uint32        // the configured log level, restored after a stop
}

func (p *pipeline) Start() {
	go p.svc.Writer.Start()
	defer close(p.consumed)
	p.consumer.Start()
}

// Stop stops the consumer, then the writer. kq's Stop closes go-zero's global log writer
// (go-queue v1.2.2), which would silence every other service of the process (standalone),
// and kq logs its normal stop as errors from its own goroutines, racing that close
// (quiet.go). So while the consumer stops, logging is at severe level only and the global
// writer is detached; both are put back once the consumer's goroutines are done (or after
// 5 s). In a standalone process the other services' error lines of that moment (well under
// a second) are not logged.
func (p *pipeline) Stop() {
	w := logx.Reset()
	logx.SetLevel(logx.SevereLevel)
	p.consumer.Stop()   // closes the readers, and go-zero's global writer (none attached)
	p.svc.Writer.Stop() // unfinished events: ErrStopped; their offsets are not committed
	select {
	case <-p.consumed:
	case <-time.After(5 * time.Second):
	}
	time.Sleep(50 * time.Millisecond) // kq's commit goroutine fails the last commits
	if w != nil {
		logx.SetWriter(w)
	}
	logx.SetLevel(p.level)
	_ = p.svc.DeadLetter.Close()
}
