package telemetry

import (
	"bufio"
	"errors"
	"net"
	"net/http"

	"github.com/zeromicro/go-zero/core/trace"
	"github.com/zeromicro/go-zero/rest/httpx"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.4.0"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// Router makes the span of each request a route of r serves, as go-zero's rest
// TraceHandler does (rest/handler/tracehandler.go; Middlewares.Trace puts it outermost in
// each route's chain, and r gets each whole chain): named by the route's path (but for the
// paths in ignore, TraceIgnorePaths), server kind, in the caller's trace from the request's
// headers, its traceparent in the answer. Unlike TraceHandler it builds the HTTP attributes
// (of the request, of the status) only for a span that records: a request the sampler
// drops costs the decision and the traceparent, not the attribute lists. The rest server
// goes with Middlewares.Trace off (else every request would have two spans).
func Router(name string, ignore []string, r httpx.Router) httpx.Router {
	t := tracingRouter{Router: r, name: name, ignore: map[string]bool{}}
	for _, p := range ignore {
		t.ignore[p] = true
	}
	return t
}

type tracingRouter struct {
	httpx.Router
	name   string
	ignore map[string]bool
}

// Handle registers the route with h inside its span.
func (t tracingRouter) Handle(method, path string, h http.Handler) error {
	if t.ignore[path] {
		return t.Router.Handle(method, path, h)
	}
	return t.Router.Handle(method, path, Handler(t.name, path, h))
}

// Handler serves next inside the span of route path of server name (Router).
func Handler(name, path string, next http.Handler) http.Handler {
	tracer := otel.Tracer(trace.TraceName)
	propagator := otel.GetTextMapPropagator()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := tracer.Start(ctx, path, oteltrace.WithSpanKind(oteltrace.SpanKindServer))
		defer span.End()
		propagator.Inject(ctx, propagation.HeaderCarrier(w.Header()))
		if !span.IsRecording() {
			next.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		span.SetAttributes(semconv.HTTPServerAttributesFromHTTPRequest(name, path, r)...)
		cw := &codeWriter{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(cw, r.WithContext(ctx))
		span.SetAttributes(semconv.HTTPAttributesFromHTTPStatusCode(cw.code)...)
		span.SetStatus(semconv.SpanStatusFromHTTPStatusCodeAndSpanKind(cw.code, oteltrace.SpanKindServer))
	})
}

// codeWriter records the status an answer was given (200 unless WriteHeader said
// otherwise), flushing and hijacking as the writer it wraps does.
type codeWriter struct {
	http.ResponseWriter
	code int
}

func (w *codeWriter) WriteHeader(code int) {
	w.ResponseWriter.WriteHeader(code)
	w.code = code
}

func (w *codeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *codeWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := w.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, errors.New("telemetry: the response writer cannot be hijacked")
}

// Unwrap is the writer w wraps (http.ResponseController).
func (w *codeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
