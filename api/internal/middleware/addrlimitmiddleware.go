package middleware

import (
	"bufio"
	"net"
	"net/http"
	"time"

	"github.com/zeromicro/go-zero/core/collection"
	"github.com/zeromicro/go-zero/core/limit"
	"github.com/zeromicro/go-zero/core/logc"
	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/seckill/seckill/api/gatekeys"
	"github.com/seckill/seckill/internal/xerr"
)

var errAddrBlocked = xerr.New(xerr.RateLimited, "too many failed authentications from this address, retry later")

// AddrLimit limits 401 answers per client address, around the router so that it sees
// requests before go-zero's JWT middleware (docs/DESIGN.md "Security"); the per-address
// reservation quota is the reserve route's (api/internal/reserve), inside it.
type AddrLimit struct {
	httpx.Router
	AuthFail *limit.PeriodLimit // nil: no failed-authentication limit
	blocked  *collection.Cache
	Keys     gatekeys.Keys
	Client   ClientIP
}

// NewAddrLimit wraps router. authFailPeriod is how long an address over its quota stays
// blocked on this gateway.
func NewAddrLimit(
	router httpx.Router,
	authFail *limit.PeriodLimit,
	authFailPeriod time.Duration,
	keys gatekeys.Keys,
	client ClientIP,
) (*AddrLimit, error) {
	blocked, err := collection.NewCache(authFailPeriod, collection.WithName("seckill-addr-blocked"))
	if err != nil {
		return nil, err
	}
	return &AddrLimit{Router: router, AuthFail: authFail, blocked: blocked,
		Keys: keys, Client: client}, nil
}

// ServeHTTP implements http.Handler.
func (m *AddrLimit) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if m.AuthFail == nil {
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
