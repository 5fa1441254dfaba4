package reserve_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/conf"
	"github.com/zeromicro/go-zero/rest"
	"github.com/zeromicro/go-zero/rest/router"

	"github.com/seckill/seckill/api/internal/config"
	"github.com/seckill/seckill/api/internal/edge"
	"github.com/seckill/seckill/api/internal/handler"
	"github.com/seckill/seckill/api/internal/reserve"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/internal/authtoken"
)

// BenchmarkFrontSoldOut: the front's work per reservation it answers SOLD_OUT from a mark
// (authenticate, decode, the marks, the prepared answer; no replay check: the gate is not
// connected to Redis), in process, each request built before the timer. Issue #36's "sale vs
// bare" row answers most of its buyers so.
//
//	go test -tags no_k8s -run '^$' -bench FrontSoldOut -benchmem ./api/internal/reserve/
func BenchmarkFrontSoldOut(b *testing.B) {
	c := &counted{marks: edge.New(edge.Conf{Enabled: true, SoldOutTTL: time.Hour, WindowTTL: time.Hour})}
	c.marks.SoldOut(5, c.marks.Gen())
	p := reserve.New(c.stages(), reserve.Front{Answer: true, MaxBytes: 64 << 10})
	h := p.Front(router.NewRouter())
	var cfg config.Config
	if err := conf.FillDefault(&cfg); err != nil {
		b.Fatal(err)
	}
	cfg.MerchantAuth.AccessSecret = "test-merchant-4e8b2f6a0c1d3e5f7a9b8c6d4e2f0a1b"
	srv := rest.MustNewServer(rest.RestConf{Host: "127.0.0.1", Port: 1}, rest.WithRouter(h))
	ctx := &svc.ServiceContext{Config: cfg, MerchantClaim: pass, Idempotency: pass, PaymentSignature: pass,
		BuyerJWT: p.Authenticated, Reserve: p.Route, Pipeline: p}
	if err := p.Mount(srv, func(srv *rest.Server) { handler.RegisterHandlers(srv, ctx) }); err != nil {
		b.Fatal(err)
	}
	tokens := make([]string, 256)
	for i := range tokens {
		tokens[i], _ = authtoken.Buyer(buyerSecret, int64(i)+1, time.Hour)
	}
	reqs := make([]*http.Request, b.N)
	for i := range reqs {
		r := httptest.NewRequest(http.MethodPost, "/v1/seckill/orders",
			strings.NewReader(`{"activity_id":5,"quantity":1,"request_id":"late-`+strconv.Itoa(100000000+i)+`"}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+tokens[i%len(tokens)])
		reqs[i] = r
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, reqs[i])
		if w.Code != http.StatusConflict {
			b.Fatalf("request %d: %d %s", i, w.Code, w.Body)
		}
	}
}
