// Package reserve is the reservation route (POST /v1/seckill/orders) of the gateway: its
// stages, in order, are authenticate, decode, the address limit, the marks and the user limit;
// then the route's logic sends the reservation it hands on (Item) to the inventory service
// (docs/DESIGN.md "A reservation's path"). One Pipeline, built once in the ServiceContext
// with its stages passed in, runs them: in front of go-zero's router (Front: the address
// limit and, on Edge.FastPath, the early answer from the marks) and on the route
// (Authenticated, Route). What the front ran stays in the request's context, so each token is
// verified once and each body decoded once. The files follow a reservation: this one builds
// the Pipeline and runs the front, route.go the route's stages, state.go keeps what they
// learned of the request.
package reserve

import (
	"context"
	"fmt"
	"net/http"
	"path"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/zeromicro/go-zero/core/logx"
	gztrace "github.com/zeromicro/go-zero/core/trace"
	"github.com/zeromicro/go-zero/rest"
	"github.com/zeromicro/go-zero/rest/httpx"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.4.0"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/api/internal/edge"
	"github.com/seckill/seckill/api/internal/middleware"
	"github.com/seckill/seckill/api/internal/reply"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/internal/xerr"
)

// errAddrRateLimited is the front's answer over an address's quota.
var errAddrRateLimited = xerr.New(xerr.RateLimited, "too many reservation attempts from this address, slow down")

// A Limiter takes one reservation of a key's quota: false when over it; an error is a
// shared limiter's Redis failure.
type Limiter[K any] interface {
	Allow(ctx context.Context, key K) (bool, error)
}

// Stages are the pipeline's parts, in the order a reservation meets them.
type Stages struct {
	// Authenticate is the buyer's id from r's token, or the 401 answer (TokenAuth.Verify).
	Authenticate func(r *http.Request) (int64, error)
	// Decode is r's reservation (edge.Decode); plainOnly: in front of go-zero's chain.
	Decode func(r *http.Request, plainOnly bool) (req types.ReserveReq, ok bool, err error)
	// ClientAddr is r's client address (nil: AddrLimit off), counted by AddrQuota and handed
	// on with the reservation (the inventory service bounds a draw's entrants per address).
	ClientAddr func(r *http.Request) string
	// AddrQuota and UserQuota count reservations per address and per buyer (nil: none);
	// Failure is what they do when their Redis fails.
	AddrQuota Limiter[string]
	UserQuota Limiter[int64]
	Failure   middleware.FailurePolicy
	// Gate validates, answers from the marks and learns from the inventory service's answers.
	Gate *edge.Gate
}

// Front is how the pipeline runs in front of go-zero's router.
type Front struct {
	// Answer: answer from the marks there (Edge.Enabled and Edge.FastPath).
	Answer bool
	// MaxBytes is the gateway's body limit (a larger body goes to the route, which refuses it).
	MaxBytes int64
	// Trace: go-zero's Middlewares.Trace, as the gateway's Telemetry decided it
	// (internal/telemetry); Name: the gateway's name in its spans.
	Trace bool
	Name  string
	// Log: go-zero's Middlewares.Log (its access log line per request, at level info): a
	// fast answer writes the line the chain would, only when the chain writes one.
	Log bool
}

// A Pipeline runs one reservation route's stages.
type Pipeline struct {
	s     Stages
	front Front
	// method and path are the route's, as the generated routes registered it (Mount).
	method, path string
	mounts       []int      // the routes Route was applied to, while Mount registers
	routes       func() int // while Mount registers: how many routes are registered

	soldOut, notStarted, end *reply.Prepared
}

// New builds the pipeline of s, run in front of the router as front says.
func New(s Stages, front Front) *Pipeline {
	return &Pipeline{s: s, front: front, soldOut: reply.Prepare(xerr.ErrSoldOut),
		notStarted: reply.Prepare(xerr.ErrNotStarted), end: reply.Prepare(xerr.ErrEnded)}
}

// Mount registers srv's routes with register (the generated handler.RegisterHandlers) and
// takes the reservation route's method and path from what it registered: the one route
// Route was mounted on. go-zero applies a route's middlewares as its group is given to
// srv.AddRoutes, and srv.Routes lists the groups in that order, so the route is the one at
// the count of routes registered when Route was applied. An error: Route was mounted on no
// route or on several. Call it once, before the server starts.
func (p *Pipeline) Mount(srv *rest.Server, register func(*rest.Server)) error {
	p.mounts = nil
	p.routes = func() int { return len(srv.Routes()) }
	register(srv)
	p.routes = nil
	if len(p.mounts) != 1 {
		return fmt.Errorf("reserve: the pipeline's Route is mounted on %d routes, not 1", len(p.mounts))
	}
	all := srv.Routes()
	if p.mounts[0] >= len(all) {
		return fmt.Errorf("reserve: the route Route was mounted on was not registered")
	}
	p.method, p.path = all[p.mounts[0]].Method, all[p.mounts[0]].Path
	return nil
}

// mounted records that go-zero applied Route to a route: the one it registers next.
func (p *Pipeline) mounted() {
	if p.routes != nil {
		p.mounts = append(p.mounts, p.routes())
	}
}

// Path is the reservation route's method and path, once mounted.
func (p *Pipeline) Path() (method, path string) { return p.method, p.path }

var fastAnswers = promauto.NewCounterVec(prometheus.CounterOpts{
	Namespace: "seckill",
	Subsystem: "api",
	Name:      "edge_fast_answers_total",
	Help:      "reservations the gateway answered from its marks before go-zero's route chain, by code",
}, []string{"code"})

// markAnswers are the answers the front gives from the marks, each with its fastAnswers child (looked
// up once: WithLabelValues hashes the label and takes the vector's lock at each call).
var markAnswers = []struct {
	err   *xerr.Error
	count prometheus.Counter
}{
	{xerr.ErrSoldOut, fastAnswers.WithLabelValues(string(xerr.SoldOut))},
	{xerr.ErrNotStarted, fastAnswers.WithLabelValues(string(xerr.NotStarted))},
	{xerr.ErrEnded, fastAnswers.WithLabelValues(string(xerr.Ended))},
}

// front runs the pipeline in front of go-zero's router.
type front struct {
	httpx.Router
	p      *Pipeline
	traced func() bool
}

// Front wraps router (inside AddrLimit): a reservation takes its address's quota there, and,
// with Front.Answer, is authenticated, decoded and checked against the marks, and answered
// when a mark holds (SOLD_OUT, NOT_STARTED, ENDED) with the bytes Route writes; every other
// request goes to router, with what the stages learned (docs/DESIGN.md "The fast path").
func (p *Pipeline) Front(router httpx.Router) httpx.Router {
	f := &front{Router: router, p: p, traced: func() bool { return false }}
	if p.front.Trace {
		f.traced = tracing
	}
	return f
}

// tracing: go-zero's trace agent runs (Telemetry not disabled, in any service of the
// process): it installed the OpenTelemetry SDK's provider, and the route's TraceHandler
// (installed: Front.Trace) makes a span of each request and returns its traceparent.
func tracing() bool {
	_, ok := otel.GetTracerProvider().(*sdktrace.TracerProvider)
	return ok
}

// ServeHTTP implements http.Handler.
func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := f.p
	if r.Method != p.method || p.path == "" {
		f.Router.ServeHTTP(w, r)
		return
	}
	exact := r.URL.Path == p.path
	if !exact && path.Clean(r.URL.Path) != p.path { // go-zero's router cleans the path
		f.Router.ServeHTTP(w, r)
		return
	}
	if err := p.addrAllow(r); err != nil {
		httpx.ErrorCtx(r.Context(), w, err)
		return
	}
	if !exact || !p.front.Answer || r.ContentLength > p.front.MaxBytes {
		f.Router.ServeHTTP(w, r)
		return
	}
	r, mark := p.early(r)
	if mark < 0 {
		f.Router.ServeHTTP(w, r)
		return
	}
	answer := markAnswers[mark].err
	code := answer.Code
	markAnswers[mark].count.Inc()
	if f.traced() {
		f.writeTraced(w, r, answer, xerr.HTTPStatus(code))
	} else {
		p.write(w, r, answer)
	}
	if p.front.Log {
		// go-zero's access log line (rest/handler LogHandler), built only at level info.
		logx.Infofn(func() any {
			return fmt.Sprintf("[HTTP] %d - %s %s - %s - %s (edge fast path)", xerr.HTTPStatus(code),
				r.Method, r.RequestURI, httpx.GetRemoteAddr(r), r.UserAgent())
		})
	}
}

// addrAllow takes one reservation of r's address's quota.
func (p *Pipeline) addrAllow(r *http.Request) error {
	if p.s.AddrQuota == nil {
		return nil
	}
	ok, err := p.s.AddrQuota.Allow(r.Context(), p.s.ClientAddr(r))
	if err != nil {
		return p.s.Failure.Failed(r.Context(), "address", err)
	}
	if !ok {
		return errAddrRateLimited
	}
	return nil
}

// early runs the first stages on r: authenticate, decode (a plain body only) and the marks.
// mark is the index in markAnswers of the answer; -1: r goes on carrying what they learned (a
// request answered here is not given the state: nothing after the front reads it).
func (p *Pipeline) early(r *http.Request) (_ *http.Request, mark int) {
	if st := stateOf(r.Context()); st != nil {
		return r, p.earlyMark(r, st)
	}
	var local state // on the stack: moved to the heap only for a request handed on
	if mark = p.earlyMark(r, &local); mark < 0 {
		st := new(state)
		*st = local
		r = r.WithContext(context.WithValue(r.Context(), stateKey{}, st))
	}
	return r, mark
}

// earlyMark is early's stages on r, learned into st: the index in markAnswers of the answer, or -1.
func (p *Pipeline) earlyMark(r *http.Request, st *state) int {
	uid, _ := p.authenticate(r, st)
	if st.authErr != nil {
		return -1 // the route answers the refusal (BuyerJWT, from the verdict in st)
	}
	req, ok, _ := p.s.Decode(r, true)
	if !ok {
		return -1 // the route decodes it (httpx.Parse)
	}
	st.req, st.decoded = req, true
	st.gen, st.checkErr = p.s.Gate.Check(r.Context(), uid, &st.req)
	st.checked = true
	for i, m := range markAnswers {
		if st.checkErr == error(m.err) {
			return i
		}
	}
	return -1 // no mark holds, or bad input: the route answers
}

// writeTraced writes the answer inside the span go-zero's TraceHandler would have made of the
// request (rest/handler/tracehandler.go): the caller's trace context from its headers, the
// route's name, the server kind, the traceparent in the answer. Unlike TraceHandler, the
// attributes are built only when the span is sampled: a dropped request costs the sampling
// decision and the traceparent, not the attribute lists.
func (f *front) writeTraced(w http.ResponseWriter, r *http.Request, err error, status int) {
	propagator := otel.GetTextMapPropagator()
	ctx := propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := otel.Tracer(gztrace.TraceName).Start(ctx, f.p.path,
		oteltrace.WithSpanKind(oteltrace.SpanKindServer))
	defer span.End()
	propagator.Inject(ctx, propagation.HeaderCarrier(w.Header()))
	f.p.write(w, r.WithContext(ctx), err)
	if span.IsRecording() {
		span.SetAttributes(semconv.HTTPServerAttributesFromHTTPRequest(f.p.front.Name, f.p.path, r)...)
		span.SetAttributes(semconv.HTTPAttributesFromHTTPStatusCode(status)...)
		span.SetStatus(semconv.SpanStatusFromHTTPStatusCodeAndSpanKind(status, oteltrace.SpanKindServer))
	}
}

// write writes err, the answer of check: a mark's pre-encoded, anything else as httpx.ErrorCtx.
func (p *Pipeline) write(w http.ResponseWriter, r *http.Request, err error) {
	switch err {
	case xerr.ErrSoldOut:
		p.soldOut.Write(r.Context(), w)
	case xerr.ErrNotStarted:
		p.notStarted.Write(r.Context(), w)
	case xerr.ErrEnded:
		p.end.Write(r.Context(), w)
	default:
		httpx.ErrorCtx(r.Context(), w, err)
	}
}
