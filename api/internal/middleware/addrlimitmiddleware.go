package middleware

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"path"
	"time"

	"github.com/zeromicro/go-zero/core/collection"
	"github.com/zeromicro/go-zero/core/limit"
	"github.com/zeromicro/go-zero/core/logc"
	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
)

// ReservePath is the route the per-address reservation limit applies to.
const ReservePath = "/v1/seckill/orders"

var (
	errAddrRateLimited = xerr.New(xerr.RateLimited, "too many reservation attempts from this address, slow down")
	errAddrBlocked     = xerr.New(xerr.RateLimited, "too many failed authentications from this address, retry later")
)

// AddrLimit limits reservations and 401 answers per client address, around the router so that
// it sees requests before go-zero's JWT middleware (docs/DESIGN.md "Security").
type AddrLimit struct {
	httpx.Router
	Reserve  ReserveLimiter     // nil: no reservation limit per address
	AuthFail *limit.PeriodLimit // nil: no failed-authentication limit
	blocked  *collection.Cache
	Keys     stock.Keys
	Client   ClientIP
	Failure  FailurePolicy
}

// ReserveLimiter takes one reservation of an address's quota (svc.AddrLimiter: in memory,
// then in Redis when shared): false when over it; an error is the shared limiter's
// Redis failure.
type ReserveLimiter interface {
	Allow(ctx context.Context, addr string) (bool, error)
}

// NewAddrLimit wraps router. authFailPeriod is how long an address over its quota stays
// blocked on this gateway.
func NewAddrLimit(
	router httpx.Router,
	reserve ReserveLimiter,
	authFail *limit.PeriodLimit,
	authFailPeriod time.Duration,
	keys stock.Keys,
	client ClientIP,
	failure FailurePolicy,
) (*AddrLimit, error) {
	blocked, err := collection.NewCache(authFailPeriod, collection.WithName("seckill-addr-blocked"))
	if err != nil {
		return nil, err
	}
	return &AddrLimit{Router: router, Reserve: reserve, AuthFail: authFail, blocked: blocked,
		Keys: keys, Client: client, Failure: failure}, nil
}

// ServeHTTP implements http.Handler.
func (m *AddrLimit) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reserve := m.Reserve != nil && r.Method == http.MethodPost && path.Clean(r.URL.Path) == ReservePath
	if m.AuthFail == nil && !reserve {
		// Nothing to count: no address is ever blocked without a failed-authentication
		// limit.
		m.Router.ServeHTTP(w, r)
		return
	}
	addr := m.Client.Addr(r)
	if _, ok := m.blocked.Get(addr); ok {
		httpx.ErrorCtx(r.Context(), w, errAddrBlocked)
		return
	}
	if reserve {
		ok, err := m.Reserve.Allow(r.Context(), addr)
		if err != nil {
			if ferr := m.Failure.Failed(r.Context(), "address", err); ferr != nil {
				httpx.ErrorCtx(r.Context(), w, ferr)
				return
			}
		} else if !ok {
			httpx.ErrorCtx(r.Context(), w, errAddrRateLimited)
			return
		}
	}
	if m.AuthFail == nil {
		m.Router.ServeHTTP(w, r)
		return
	}
	sw := &statusWriter{ResponseWriter: w}
	m.Router.ServeHTTP(sw, r)
	if sw.status == http.StatusUnauthorized {
		state, err := m.AuthFail.TakeCtx(r.Context(), m.Keys.RateLimitAddr("authfail", addr))
		switch {
		case err != nil:
			// The answer is written already; only count the failure.
			limiterFailures.WithLabelValues("authfail").Inc()
		case state == limit.OverQuota:
			m.blocked.Set(addr, struct{}{})
			logc.Infof(r.Context(), "address %s is over its failed-authentication quota: blocked", addr)
		}
	}
}

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}

// Flush passes through.
func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack passes through (go-zero's timeout writer hijacks only a writer that is a Hijacker).
func (s *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(s.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
