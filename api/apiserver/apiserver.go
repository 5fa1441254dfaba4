// Package apiserver builds the HTTP gateway. The api main and the standalone launcher
// both use it, so the wiring exists once.
package apiserver

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/zeromicro/go-zero/core/conf"
	"github.com/zeromicro/go-zero/rest"
	"github.com/zeromicro/go-zero/rest/httpx"
	"github.com/zeromicro/go-zero/rest/router"

	"github.com/seckill/seckill/api/gatekeys"
	"github.com/seckill/seckill/api/internal/config"
	"github.com/seckill/seckill/api/internal/console"
	"github.com/seckill/seckill/api/internal/handler"
	"github.com/seckill/seckill/api/internal/middleware"
	"github.com/seckill/seckill/api/internal/reply"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/internal/buildinfo"
	"github.com/seckill/seckill/internal/telemetry"
)

// Config is the gateway's configuration (etc/seckill-api.yaml).
type Config = config.Config

// Environment variables overriding the JWT secrets.
const (
	EnvBuyerSecret    = config.EnvBuyerSecret
	EnvMerchantSecret = config.EnvMerchantSecret
	EnvPaymentSecret  = config.EnvPaymentSecret
)

// LoadConfig reads a config file with go-zero defaults, then the secrets (SecretsFile, then the
// environment; in pro mode one written in the file is an error), which New checks.
func LoadConfig(file string) (Config, error) {
	// Loaded as a type without Config's methods: go-zero's loader calls Validate, which
	// must run after the secrets were applied.
	var fc fileConfig
	if err := conf.Load(file, &fc, conf.UseEnv()); err != nil {
		return Config(fc), err
	}
	c := Config(fc)
	if err := c.LoadSecrets(); err != nil {
		return c, err
	}
	return c, nil
}

type fileConfig Config

// Server is the gateway: go-zero rest server, routes, zRPC client.
type Server struct {
	Config Config
	svc    *svc.ServiceContext
	rest   *rest.Server

	mu      sync.Mutex
	http    *http.Server
	started chan struct{}
}

// New builds the gateway from c (built in code: through conf.FillDefault first) and installs
// the process-wide error responder, so every error leaves as {"code","msg"}.
func New(c Config) (*Server, error) {
	buildinfo.Register() // seckill_build_info{version,commit}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	// go-zero's TraceHandler, the inventory client's trace interceptor and the fast path's
	// span only when the gateway's Telemetry exports (DESIGN "Traces").
	telemetry.Rest(&c.RestConf)
	telemetry.Client(&c.Inventory, c.Telemetry)
	ctx, err := svc.New(c)
	if err != nil {
		return nil, err
	}
	httpx.SetErrorHandlerCtx(reply.ErrorHandler)
	// The reservation route's pipeline runs in front of go-zero's route chain (DESIGN "The
	// fast path"), inside the per-address limits, which see requests before go-zero's JWT
	// middleware and the 401s it writes.
	rc, routes := routing(c)
	addrs, err := middleware.NewAddrLimit(ctx.Pipeline.Front(routes), ctx.AddrAuthFail,
		time.Duration(c.AddrLimit.AuthFailPeriod)*time.Second, gatekeys.Keys{Prefix: c.KeyPrefix}, ctx.ClientIP)
	if err != nil {
		ctx.Close()
		return nil, err
	}
	srv, err := rest.NewServer(rc,
		// Outermost: body cap for chunked bodies, JSON bodies for go-zero's bare errors.
		rest.WithRouter(reply.Router{Router: addrs, MaxBytes: c.MaxBytes}),
		rest.WithNotFoundHandler(reply.NotFound),
		rest.WithNotAllowedHandler(reply.NotAllowed),
		rest.WithUnauthorizedCallback(reply.Unauthorized),
		// The merchant console: embedded static files at /console/ (GET only; it calls
		// the merchant API with the token the merchant pastes).
		rest.WithFileServer(console.Path, console.Files()),
	)
	if err != nil {
		ctx.Close()
		return nil, err
	}
	// The generated routes, with the reservation route's method and path taken from them.
	if err := ctx.Pipeline.Mount(srv, func(srv *rest.Server) { handler.RegisterHandlers(srv, ctx) }); err != nil {
		ctx.Close()
		return nil, err
	}
	reply.RedactLogs() // after rest.NewServer set the logging up
	return &Server{Config: c, svc: ctx, rest: srv, started: make(chan struct{})}, nil
}

// routing is the rest server's config and router: while the gateway traces, its route
// spans are made by telemetry.Router in place of go-zero's TraceHandler, which builds the
// attribute lists of every request before the sampling decision (DESIGN "Traces").
func routing(c Config) (rest.RestConf, httpx.Router) {
	rc, routes := c.RestConf, router.NewRouter()
	if !rc.Middlewares.Trace {
		return rc, routes
	}
	rc.Middlewares.Trace = false
	return rc, telemetry.Router(c.Name, c.TraceIgnorePaths, routes)
}

// Start serves until Stop; it blocks.
func (s *Server) Start() {
	s.rest.StartWithOpts(func(hs *http.Server) {
		hs.Handler = console.Secure(hs.Handler) // go-zero's file server is outside every router
		// go-zero sets the read and write bounds from the longest route timeout, and none at
		// all once a route has no timeout (the orders route, for its streamed export). A
		// request is read within 4/5 of the sale's timeout; an answer is written within
		// config.WriteTimeout (11/10 of the reconcile route's 70s, go-zero's own rule).
		t := time.Duration(s.Config.Timeout) * time.Millisecond
		if t > 0 && (hs.ReadTimeout == 0 || hs.ReadTimeout > 4*t/5) {
			hs.ReadTimeout = 4 * t / 5
		}
		if hs.WriteTimeout == 0 {
			hs.WriteTimeout = config.WriteTimeout
		}
		s.mu.Lock()
		s.http = hs
		s.mu.Unlock()
		close(s.started)
	})
}

// Started is closed once the HTTP server exists (it may still be binding its port).
func (s *Server) Started() <-chan struct{} { return s.started }

// Handler is the whole HTTP handler the gateway serves (go-zero's middleware chain, the
// router, the routes), or nil before Started: for in-process benchmarks.
func (s *Server) Handler() http.Handler {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.http == nil {
		return nil
	}
	return s.http.Handler
}

// Routes are the routes the gateway serves (method and path), as go-zero registered them.
func (s *Server) Routes() []rest.Route { return s.rest.Routes() }

// Stop shuts the HTTP server down gracefully and closes the zRPC connection. Unlike
// rest.Server.Stop it does not close go-zero's global logger, so that one process can
// stop and start servers (tests, the standalone launcher).
func (s *Server) Stop() {
	s.mu.Lock()
	hs := s.http
	s.mu.Unlock()
	if hs != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hs.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = hs.Close()
		}
	}
	s.svc.Close()
}
