// Package rpcserver builds the inventory zRPC server. The rpc main and the standalone
// launcher both use it, so the wiring exists once.
package rpcserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/conf"
	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/service"
	"github.com/zeromicro/go-zero/core/stores/redis"
	"github.com/zeromicro/go-zero/zrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/reflection"

	"github.com/seckill/seckill/internal/buildinfo"
	"github.com/seckill/seckill/internal/depwatch"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/redisx"
	"github.com/seckill/seckill/internal/telemetry"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/internal/caller"
	"github.com/seckill/seckill/rpc/internal/config"
	"github.com/seckill/seckill/rpc/internal/server"
	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"
)

// Config is the inventory service's configuration (etc/inventory.yaml).
type Config = config.Config

// AppToken is one caller allowed when Auth is on.
type AppToken = config.AppToken

// ServiceContext is what the service holds for its lifetime.
type ServiceContext = svc.ServiceContext

// LoadConfig reads a config file, applying go-zero defaults; ${VAR} in the file is
// replaced by the environment variable VAR (secrets, passwords).
func LoadConfig(file string) (Config, error) {
	var c Config
	err := conf.Load(file, &c, conf.UseEnv())
	return c, err
}

// Server is the zRPC server plus the background work the service owns.
type Server struct {
	Svc   *ServiceContext
	rpc   *zrpc.RpcServer
	group *service.ServiceGroup

	mu   sync.Mutex
	grpc *grpc.Server // set once serving

	probe red.UniversalClient // the Redis probe's client, closed by Stop
}

// New builds the service. A Config built in code should pass through conf.FillDefault
// first (go-zero defaults only apply through the loader).
func New(c Config) (*Server, error) {
	buildinfo.Register() // seckill_build_info{version,commit}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	ctx, err := svc.New(c)
	if err != nil {
		return nil, err
	}
	var authn *caller.Authenticator
	if c.Auth {
		if authn, err = authApps(ctx, c.Apps, c.LegacyAppsHash); err != nil {
			return nil, err
		}
	}
	// zrpc.NewServer builds its load shedder before it runs c.SetUp(), which is what turns
	// shedding off in dev/test mode (load.Disable): set up first, so a dev or test server
	// does not shed at CpuThreshold. A pro server sheds as configured.
	if err := c.SetUp(); err != nil {
		return nil, err
	}
	srv := &Server{Svc: ctx}
	s, err := zrpc.NewServer(serverConf(c), func(g *grpc.Server) {
		srv.mu.Lock()
		srv.grpc = g
		srv.mu.Unlock()
		inventory.RegisterInventoryServer(g, server.NewInventoryServer(ctx))
		if c.Mode == service.DevMode || c.Mode == service.TestMode {
			reflection.Register(g)
		}
	})
	if err != nil {
		return nil, err
	}
	if authn != nil {
		s.AddUnaryInterceptors(authn.Unary)
		s.AddStreamInterceptors(authn.Stream)
	}
	tlsOpts, err := c.TLS.Options()
	if err != nil {
		return nil, err
	}
	s.AddOptions(tlsOpts...)
	s.AddUnaryInterceptors(xerr.UnaryServerInterceptor, countOutcomes)
	s.AddStreamInterceptors(xerr.StreamServerInterceptor)
	group := service.NewServiceGroup()
	group.Add(s)
	if ctx.Relay != nil {
		group.Add(ctx.Relay)
	}
	group.Add(ctx.Draws) // decides the opening draws as they fall due
	if ctx.Degrade.On {
		group.Add(ctx.Degrade) // hands degraded activities back to Redis once it answers
	}
	srv.probe = redisx.NewProbe(c.StockRedis)
	group.Add(depwatch.New(c.Probe, "rpc", redisProbe(ctx, srv.probe),
		depwatch.Probe{Dependency: "mysql", Check: func(pctx context.Context) error {
			db, err := ctx.DB.RawDB()
			if err != nil {
				return err
			}
			return db.PingContext(pctx)
		}}))
	srv.rpc, srv.group = s, group
	return srv, nil
}

// redisProbe checks Redis for depwatch and reloads the scripts once it answers, both through
// probe, a client around go-zero's breaker, which drops PING and SCRIPT LOAD like any call
// while it is open (Known traps).
func redisProbe(ctx *ServiceContext, probe red.UniversalClient) depwatch.Probe {
	return depwatch.Probe{Dependency: "redis", Check: func(pctx context.Context) error {
		if !redisx.Answers(pctx, probe) {
			return errors.New("redis ping failed")
		}
		// A Redis back from a restart or a failover has no script cache. A script call
		// then needs its NOSCRIPT fallback (EVAL) to pass go-zero's breaker right after
		// the failed EVALSHA, which an open breaker mostly drops: the cache would
		// refill only by luck, and every failed try keeps the breaker open. So the probe
		// loads every script again (idempotent, one SCRIPT LOAD each), around the breaker.
		if err := ctx.Store.LoadScripts(pctx, probe); err != nil {
			logx.Errorf("rpc: redis answers, reloading the scripts failed (next probe retries): %v", err)
		}
		return nil
	}}
}

// serverConf is go-zero's server config as the service runs it: Reconcile, Repair and
// DrawAudit with their timeout (longCalls), authApps' authenticator in place of go-zero's,
// and go-zero's trace interceptors only when the service exports spans (DESIGN "Traces").
func serverConf(c Config) zrpc.RpcServerConf {
	sc := c.RpcServerConf
	sc.MethodTimeouts = longCalls(c.MethodTimeouts, c.Reconcile.Timeout)
	sc.Auth = false
	telemetry.Server(&sc)
	return sc
}

// AppsKey is the hash app -> token that go-zero's zRPC authenticator reads (RpcServerConf
// Auth with Redis.Key), under the deployment's key prefix: authApps deletes it, or with
// legacy writes it.
func AppsKey(prefix string) string { return prefix + "sk:rpc:apps" }

// authApps returns the authenticator of Apps: the service checks tokens itself, from
// memory, in place of go-zero's authenticator (which reads app -> token from the StockRedis
// hash sk:rpc:apps and caches each for 5 minutes). It deletes that hash, so that no token
// stays in Redis (nor goes on into its AOF); with legacy (Config.LegacyAppsHash, a rolling
// upgrade from a version that used go-zero's) it makes the hash equal Apps instead (a
// removed app deleted, a rotated token replaced), the tokens in clear, as go-zero compares.
func authApps(ctx *ServiceContext, apps []AppToken, legacy bool) (*caller.Authenticator, error) {
	key := AppsKey(ctx.Config.KeyPrefix)
	tctx, cancel := context.WithTimeout(event.Untraced(context.Background()), 5*time.Second)
	defer cancel()
	err := ctx.Redis.PipelinedCtx(tctx, func(p redis.Pipeliner) error {
		p.Del(tctx, key)
		for i := 0; legacy && i < len(apps); i++ {
			p.HSet(tctx, key, apps[i].App, apps[i].Token)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rpc auth: writing the app tokens: %w", err)
	}
	return caller.NewAuthenticator(apps), nil
}

// Start serves until Stop; it blocks.
func (s *Server) Start() { s.group.Start() }

// Stop stops serving and the background work, keeping go-zero's global logger open (zrpc's
// own Stop would close it and leave the gRPC server to the process's shutdown).
func (s *Server) Stop() {
	w := logx.Reset()
	s.group.Stop()
	if w != nil {
		logx.SetWriter(w)
	}
	s.Svc.Loader.Close() // rebuilds in progress stop; their locks lapse after the lease
	_ = s.probe.Close()
	s.mu.Lock()
	g := s.grpc
	s.mu.Unlock()
	if g != nil {
		done := make(chan struct{})
		go func() { g.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			g.Stop()
		}
	}
	s.Svc.Close() // nothing serves now: degrade mode's probe goes
}

// longMethods are the calls that read a whole activity: a reconciliation, a repair, a draw's
// audit (20,000 entrants and more) outlast the sale's Timeout.
var longMethods = []string{inventory.Inventory_Reconcile_FullMethodName, inventory.Inventory_Repair_FullMethodName,
	inventory.Inventory_DrawAudit_FullMethodName}

// longCalls adds longMethods with timeout to the configured method timeouts (those already
// named keep theirs).
func longCalls(set []zrpc.MethodTimeoutConf, timeout time.Duration) []zrpc.MethodTimeoutConf {
	out := append([]zrpc.MethodTimeoutConf{}, set...)
	for _, m := range longMethods {
		if !slices.ContainsFunc(set, func(t zrpc.MethodTimeoutConf) bool { return t.FullMethod == m }) {
			out = append(out, zrpc.MethodTimeoutConf{FullMethod: m, Timeout: timeout})
		}
	}
	return out
}
