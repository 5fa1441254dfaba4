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
	"github.com/zeromicro/go-zero/rest/httpx"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.4.0"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/api/internal/reply"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/internal/xerr"
)

var fastAnswers = promauto.NewCounterVec(prometheus.CounterOpts{
	Namespace: "seckill",
	Subsystem: "api",
	Name:      "edge_fast_answers_total",
	Help:      "reservations the gateway answered from its marks before go-zero's route chain, by code",
}, []string{"code"})

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
	r, answer := p.early(r)
	if answer == nil {
		f.Router.ServeHTTP(w, r)
		return
	}
	code := answer.Code
	fastAnswers.WithLabelValues(string(code)).Inc()
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
// answer is a mark's; nil: r goes on carrying what they learned.
func (p *Pipeline) early(r *http.Request) (_ *http.Request, answer *xerr.Error) {
	r, st := with(r)
	uid, _ := p.authenticate(r, st)
	if st.authErr != nil {
		return r, nil //nolint:nilerr // the route answers the refusal (BuyerJWT, from the verdict in st)
	}
	req, ok, _ := p.s.Decode(r, true)
	if !ok {
		return r, nil // the route decodes it (httpx.Parse)
	}
	st.req, st.decoded = req, true
	st.gen, st.checkErr = p.s.Gate.Check(r.Context(), uid, &st.req)
	st.checked = true
	for _, mark := range []*xerr.Error{xerr.ErrSoldOut, xerr.ErrNotStarted, xerr.ErrEnded} {
		if st.checkErr == error(mark) {
			return r, mark
		}
	}
	return r, nil // no mark holds, or bad input: the route answers
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

// state is what the stages learned of one request, kept in its context.
type state struct {
	authed, decoded, checked bool
	uid                      int64
	authErr                  error // the 401 answer, when authed
	req                      types.ReserveReq
	gen                      uint64 // the marks' generation when checked (Gate.Observe)
	checkErr                 error  // the Gate's answer, when checked
	addr                     string
	reply.Outcome
}

type stateKey struct{}

func stateOf(ctx context.Context) *state {
	st, _ := ctx.Value(stateKey{}).(*state)
	return st
}

// with is r with a state of its own (the one it carries, if any).
func with(r *http.Request) (*http.Request, *state) {
	if st := stateOf(r.Context()); st != nil {
		return r, st
	}
	st := &state{}
	return r.WithContext(context.WithValue(r.Context(), stateKey{}, st)), st
}

// authenticate runs the Authenticate stage once per request.
func (p *Pipeline) authenticate(r *http.Request, st *state) (int64, error) {
	if !st.authed {
		st.uid, st.authErr = p.s.Authenticate(r)
		st.authed = true
	}
	return st.uid, st.authErr
}
