// Package baseline holds the floors the gateway is measured against, and the load driver
// that measures them: a bare go-zero HTTP handler returning a fixed small JSON (what a
// sold-out rejection is compared with) and an HTTP->zRPC echo (what a reservation is
// compared with: the same rest middleware profile and JWT, a parsed reservation body, one
// zRPC Ping to the running inventory service). The api benchmarks (api/apiserver) and
// `make bench` (devkit/benchrun) both use them, so each exists once.
package baseline

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/zeromicro/go-zero/rest"
	"github.com/zeromicro/go-zero/rest/httpx"
	"github.com/zeromicro/go-zero/zrpc"

	"github.com/seckill/seckill/rpc/inventoryclient"
)

// Routes of the baseline servers.
const (
	EchoPath = "/echo" // POST, JWT, reservation body -> {"order_no": request_id, ...}
	BarePath = "/bare" // POST -> {"code":"SOLD_OUT"}
)

// EchoRequest is the echo's body: the shape of a reservation request (API.md).
type EchoRequest struct {
	ActivityId int64  `json:"activity_id"`
	Quantity   int64  `json:"quantity,default=1"`
	RequestId  string `json:"request_id"`
}

// Server is a running baseline server.
type Server struct {
	URL string // http://host:port

	rest *rest.Server
	rpc  zrpc.Client // the echo's; nil for the bare handler

	mu sync.Mutex
	hs *http.Server
}

// StartEcho serves EchoPath with the middleware profile c (a gateway's RestConf, with its
// Mode, timeouts and middlewares) behind JWT (jwtSecret): it parses the reservation body,
// makes one zRPC Ping to the inventory service rpc names and answers 200
// {"order_no": <request_id>, "activity_id": ...}. c.Port 0 picks a free port.
func StartEcho(c rest.RestConf, jwtSecret string, rpc zrpc.RpcClientConf) (*Server, error) {
	cli, err := zrpc.NewClient(rpc)
	if err != nil {
		return nil, fmt.Errorf("echo's zRPC client: %w", err)
	}
	inv := inventoryclient.NewInventory(cli)
	s, err := start(c, rest.Route{Method: http.MethodPost, Path: EchoPath, Handler: func(w http.ResponseWriter,
		r *http.Request) {
		var req EchoRequest
		if err := httpx.Parse(r, &req); err != nil {
			httpx.ErrorCtx(r.Context(), w, err)
			return
		}
		if _, err := inv.Ping(r.Context(), &inventoryclient.PingReq{}); err != nil {
			httpx.ErrorCtx(r.Context(), w, err)
			return
		}
		httpx.OkJsonCtx(r.Context(), w, map[string]any{"order_no": req.RequestId, "activity_id": req.ActivityId})
	}}, rest.WithJwt(jwtSecret))
	if err != nil {
		_ = cli.Conn().Close()
		return nil, err
	}
	s.rpc = cli
	return s, nil
}

// StartBare serves BarePath with the middleware profile c and no JWT: it answers 200
// {"code":"SOLD_OUT"} without reading anything. c.Port 0 picks a free port.
func StartBare(c rest.RestConf) (*Server, error) {
	return start(c, rest.Route{Method: http.MethodPost, Path: BarePath, Handler: func(w http.ResponseWriter,
		r *http.Request) {
		httpx.OkJsonCtx(r.Context(), w, map[string]string{"code": "SOLD_OUT"})
	}})
}

func start(c rest.RestConf, route rest.Route, opts ...rest.RouteOption) (*Server, error) {
	if c.Host == "" || c.Host == "0.0.0.0" {
		c.Host = "127.0.0.1"
	}
	if c.Port == 0 {
		port, err := freePort(c.Host)
		if err != nil {
			return nil, err
		}
		c.Port = port
	}
	// go-zero runs one DevServer per process; a baseline must not take the gateway's.
	c.DevServer.Enabled = false
	srv, err := rest.NewServer(c)
	if err != nil {
		return nil, err
	}
	srv.AddRoute(route, opts...)
	s := &Server{URL: "http://" + net.JoinHostPort(c.Host, strconv.Itoa(c.Port)), rest: srv}
	// rest.Server.Stop would close go-zero's process-wide logger: keep the *http.Server
	// and close that instead.
	go srv.StartWithOpts(func(hs *http.Server) { s.mu.Lock(); s.hs = hs; s.mu.Unlock() })
	if err := waitListening(net.JoinHostPort(c.Host, strconv.Itoa(c.Port)), 10*time.Second); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Handler is the whole HTTP handler the server serves (go-zero's middleware chain and the
// route): for in-process benchmarks.
func (s *Server) Handler() http.Handler {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hs == nil {
		return nil
	}
	return s.hs.Handler
}

// Close stops the server and closes the echo's zRPC connection.
func (s *Server) Close() {
	s.mu.Lock()
	hs := s.hs
	s.mu.Unlock()
	if hs != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hs.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = hs.Close()
		}
	}
	if s.rpc != nil {
		_ = s.rpc.Conn().Close()
	}
}

func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitListening(addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("baseline server on %s did not start: %w", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
