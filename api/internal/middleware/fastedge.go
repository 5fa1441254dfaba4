package middleware

import (
	"fmt"
	"net/http"

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

	"github.com/seckill/seckill/api/internal/edge"
	"github.com/seckill/seckill/internal/xerr"
)

var fastAnswers = promauto.NewCounterVec(prometheus.CounterOpts{
	Namespace: "seckill",
	Subsystem: "api",
	Name:      "edge_fast_answers_total",
	Help:      "reservations the gateway answered from its marks before go-zero's route chain, by code",
}, []string{"code"})

// FastEdge answers, in front of go-zero's router, the reservations the edge marks already
// answer (SOLD_OUT, NOT_STARTED, ENDED) whose buyer token verifies without parsing, with
// the bytes ReserveEdge writes; every other request goes to the router, unchanged
// (docs/DESIGN.md "Sold-out at the edge", "The fast path"). It sits inside AddrLimit.
type FastEdge struct {
	httpx.Router
	auth     *TokenAuth
	gate     *edge.Gate
	answers  *ReserveEdgeMiddleware
	maxBytes int64
	traced   func() bool
	name     string // the gateway's name in its spans (go-zero's TraceHandler's serviceName)
}

// NewFastEdge wraps router: reservations authenticated by buyers (the buyer routes'
// TokenAuth) and answered by gate's marks, written as answers writes them; maxBytes is the
// gateway's body limit (a larger body goes to the route, which refuses it). With traceRoutes
// (go-zero's Middlewares.Trace), an answer made while traces are on follows the sampling
// decision, as the route's TraceHandler would: a span named as the route's, with its
// attributes only when sampled, and the traceparent in the answer (name: the gateway's).
func NewFastEdge(router httpx.Router, buyers *TokenAuth, gate *edge.Gate, answers *ReserveEdgeMiddleware,
	maxBytes int64, traceRoutes bool, name string) *FastEdge {
	f := &FastEdge{Router: router, auth: buyers, gate: gate, answers: answers, maxBytes: maxBytes,
		traced: func() bool { return false }, name: name}
	if traceRoutes {
		f.traced = tracing
	}
	return f
}

// tracing: go-zero's trace agent runs (Telemetry not disabled, in any service of the
// process): it installed the OpenTelemetry SDK's provider, and the route's TraceHandler
// makes a span of each request and returns its traceparent.
func tracing() bool {
	_, ok := otel.GetTracerProvider().(*sdktrace.TracerProvider)
	return ok
}

// ServeHTTP implements http.Handler.
func (f *FastEdge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != ReservePath || r.ContentLength > f.maxBytes {
		f.Router.ServeHTTP(w, r)
		return
	}
	// Identity first, as the route's chain does (BuyerClaim before ReserveEdge): a token
	// that does not verify here goes to the route, which parses it or answers 401.
	uid, ok := f.auth.Verified(r)
	if !ok {
		f.Router.ServeHTTP(w, r)
		return
	}
	err := f.gate.Peek(r, uid)
	if err == nil {
		f.Router.ServeHTTP(w, r)
		return
	}
	code := xerr.CodeOf(err)
	fastAnswers.WithLabelValues(string(code)).Inc()
	if f.traced() {
		f.writeTraced(w, r, err, xerr.HTTPStatus(code))
	} else {
		f.answers.write(w, r, err)
	}
	// go-zero's access log line (rest/handler LogHandler), built only at level info.
	logx.Infofn(func() any {
		return fmt.Sprintf("[HTTP] %d - %s %s - %s - %s (edge fast path)", xerr.HTTPStatus(code),
			r.Method, r.RequestURI, httpx.GetRemoteAddr(r), r.UserAgent())
	})
}

// writeTraced writes the answer inside the span go-zero's TraceHandler would have made of the
// request (rest/handler/tracehandler.go): the caller's trace context from its headers, the
// route's name, the server kind, the traceparent in the answer. Unlike TraceHandler, the
// attributes are built only when the span is sampled: a dropped request costs the sampling
// decision and the traceparent, not the attribute lists.
func (f *FastEdge) writeTraced(w http.ResponseWriter, r *http.Request, err error, status int) {
	propagator := otel.GetTextMapPropagator()
	ctx := propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := otel.Tracer(gztrace.TraceName).Start(ctx, ReservePath,
		oteltrace.WithSpanKind(oteltrace.SpanKindServer))
	defer span.End()
	propagator.Inject(ctx, propagation.HeaderCarrier(w.Header()))
	f.answers.write(w, r.WithContext(ctx), err)
	if span.IsRecording() {
		span.SetAttributes(semconv.HTTPServerAttributesFromHTTPRequest(f.name, ReservePath, r)...)
		span.SetAttributes(semconv.HTTPAttributesFromHTTPStatusCode(status)...)
		span.SetStatus(semconv.SpanStatusFromHTTPStatusCodeAndSpanKind(status, oteltrace.SpanKindServer))
	}
}
