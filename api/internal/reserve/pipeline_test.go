package reserve_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v4"
	"github.com/zeromicro/go-zero/core/conf"
	"github.com/zeromicro/go-zero/rest"
	"github.com/zeromicro/go-zero/rest/httpx"
	"github.com/zeromicro/go-zero/rest/router"

	"github.com/seckill/seckill/api/internal/config"
	"github.com/seckill/seckill/api/internal/edge"
	"github.com/seckill/seckill/api/internal/handler"
	"github.com/seckill/seckill/api/internal/middleware"
	"github.com/seckill/seckill/api/internal/reply"
	"github.com/seckill/seckill/api/internal/reserve"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/internal/authtoken"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

const buyerSecret = "test-buyer-9f3c1a7e5b2d4c8f0a6e1b3d5c7f9a2e"

// counted is a pipeline's stages with the real authentication and decoder, each call counted.
type counted struct {
	auths, decodes atomic.Int64
	marks          *edge.Marks
}

func (c *counted) stages() reserve.Stages {
	a := middleware.NewTokenAuth(buyerSecret, authtoken.BuyerClaim, 0)
	return reserve.Stages{
		Authenticate: func(r *http.Request) (int64, error) {
			c.auths.Add(1)
			return a.Verify(r)
		},
		Decode: func(r *http.Request, plainOnly bool) (types.ReserveReq, bool, error) {
			req, ok, err := edge.Decode(r, plainOnly)
			if ok || err != nil { // a plain decoder that declines another shape decodes nothing
				c.decodes.Add(1)
			}
			return req, ok, err
		},
		Gate: edge.NewGate(c.marks, nil),
	}
}

// reserved answers every reservation with an order.
type reserved struct{}

func (reserved) Reserve(_ context.Context, _ int64, it *inventoryclient.ReserveItem) (*inventoryclient.ReserveResp,
	error) {
	return &inventoryclient.ReserveResp{OrderNo: "1", Quantity: it.Quantity, RequestId: it.RequestId}, nil
}

func pass(next http.HandlerFunc) http.HandlerFunc { return next }

// serve runs the generated routes (handler.RegisterHandlers) on a go-zero server with p in
// front of its router and on its buyer routes, reservations answered by reserved, its config
// changed by each of edit; it returns the server's address.
func serve(t *testing.T, p *reserve.Pipeline, edit ...func(*config.Config)) string {
	t.Helper()
	var c config.Config
	if err := conf.FillDefault(&c); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.Host, c.Port = "127.0.0.1", l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	c.Mode, c.Log.Level, c.Log.Stat, c.DevServer.Enabled, c.Telemetry.Disabled = "test", "severe", false, false, true
	c.MaxBytes = 64 << 10
	c.MerchantAuth.AccessSecret = "test-merchant-4e8b2f6a0c1d3e5f7a9b8c6d4e2f0a1b"
	for _, e := range edit {
		e(&c)
	}
	srv, err := rest.NewServer(c.RestConf, rest.WithRouter(p.Front(router.NewRouter())))
	if err != nil {
		t.Fatal(err)
	}
	httpx.SetErrorHandlerCtx(reply.ErrorHandler)
	ctx := &svc.ServiceContext{Config: c, MerchantClaim: pass, Idempotency: pass, PaymentSignature: pass,
		BuyerJWT: p.Authenticated, Reserve: p.Route, Pipeline: p, Reservations: reserved{}}
	if err := p.Mount(srv, func(srv *rest.Server) { handler.RegisterHandlers(srv, ctx) }); err != nil {
		t.Fatal(err)
	}
	if m, path := p.Path(); m != http.MethodPost || path != "/v1/seckill/orders" {
		t.Fatalf("mounted on %s %s, want POST /v1/seckill/orders", m, path)
	}
	hs := make(chan *http.Server, 1)
	go srv.StartWithOpts(func(s *http.Server) { hs <- s })
	s := <-hs
	t.Cleanup(func() { _ = s.Close() })
	addr := fmt.Sprintf("127.0.0.1:%d", c.Port)
	for i := 0; ; i++ {
		if conn, err := net.Dial("tcp", addr); err == nil {
			_ = conn.Close()
			return addr
		} else if i == 200 {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestEachStageOncePerRequest: whether the front answers a reservation or hands it on to
// go-zero's chain, its token is verified once and its body decoded once, with the fast path
// on and off (a token only go-zero's parser verifies, a bad token, a body only httpx.Parse
// decodes included).
func TestEachStageOncePerRequest(t *testing.T) {
	plain, _ := authtoken.Buyer(buyerSecret, 42, time.Hour)
	parsed, _ := authtoken.Sign(buyerSecret, jwt.MapClaims{"uid": 43, "jti": "x"}, time.Hour)
	const sold, open = `{"activity_id":5,"request_id":"abcdefgh"}`, `{"activity_id":6,"request_id":"abcdefgh"}`
	cases := []struct {
		name, token, body, query string
		status, decodes          int
	}{
		{"plain token, no mark", plain, open, "", http.StatusOK, 1},
		{"plain token, sold out", plain, sold, "", http.StatusConflict, 1},
		{"parsed token, no mark", parsed, open, "", http.StatusOK, 1},
		{"parsed token, sold out", parsed, sold, "", http.StatusConflict, 1},
		{"bad token", "a.b.c", open, "", http.StatusUnauthorized, 0},
		{"query string", plain, open, "?x=1", http.StatusOK, 1},
	}
	for _, fast := range []bool{true, false} {
		c := &counted{marks: edge.New(edge.Conf{Enabled: true, SoldOutTTL: time.Minute, WindowTTL: time.Minute})}
		c.marks.SoldOut(5, c.marks.Gen())
		addr := serve(t, reserve.New(c.stages(), reserve.Front{Answer: fast, MaxBytes: 64 << 10}))
		for _, tc := range cases {
			c.auths.Store(0)
			c.decodes.Store(0)
			req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/seckill/orders"+tc.query,
				strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+tc.token)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			_ = res.Body.Close()
			if res.StatusCode != tc.status {
				t.Errorf("fast %v, %s: %d %s, want %d", fast, tc.name, res.StatusCode, body, tc.status)
			}
			if a, d := c.auths.Load(), c.decodes.Load(); a != 1 || d != int64(tc.decodes) {
				t.Errorf("fast %v, %s: token verified %d times, body decoded %d; want 1 and %d",
					fast, tc.name, a, d, tc.decodes)
			}
		}
	}
}

// TestMountNeedsOneRoute: a pipeline mounted on no route or on two is an error.
func TestMountNeedsOneRoute(t *testing.T) {
	p := reserve.New(reserve.Stages{}, reserve.Front{})
	ok := func(w http.ResponseWriter, _ *http.Request) {}
	for n, routes := range [][]rest.Route{
		nil, {{Method: http.MethodPost, Path: "/a", Handler: ok}, {Method: http.MethodPost, Path: "/b", Handler: ok}},
	} {
		srv := rest.MustNewServer(rest.RestConf{Host: "127.0.0.1", Port: 1})
		err := p.Mount(srv, func(srv *rest.Server) {
			srv.AddRoutes([]rest.Route{{Method: http.MethodGet, Path: "/x", Handler: ok}})
			if routes != nil {
				srv.AddRoutes(rest.WithMiddleware(p.Route, routes...))
			}
		})
		if err == nil {
			t.Errorf("mounted on %d routes: no error", 2*n)
		}
	}
}
