// Package reply is the gateway's one error responder: every error — a logic's, a zRPC
// status, a request that did not parse, and go-zero's own 401/404/405/413/503 — leaves as
// the HTTP status of its code word with the body {"code","msg"} (docs/API.md).
package reply

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/zeromicro/go-zero/core/logc"
	"google.golang.org/grpc/status"

	"github.com/seckill/seckill/internal/xerr"
)

// Body is the error body clients switch on.
type Body struct {
	Code string `json:"code"`
	Msg  string `json:"msg"`
}

var errorsTotal = promauto.NewCounterVec(prometheus.CounterOpts{
	Namespace: "seckill",
	Subsystem: "api",
	Name:      "errors_total",
	Help:      "error responses of the gateway by API code word",
}, []string{"code"})

// goZeroRangeError is what go-zero's httpx.Parse (core/mapping) answers for a number outside
// a range= of api/seckill.api's tags: it names no field, and reads like a server's fault.
const goZeroRangeError = "wrong number range setting"

// outOfRange is the message of that answer.
const outOfRange = "a number is out of its range (docs/API.md \"Bounds\"; minimum and maximum in /openapi.json)"

// Classify turns any error reaching the edge into its API outcome: an *xerr.Error as it is, a
// zRPC or dependency failure by xerr.FromStatus (BUSY when unanswered), anything else (httpx.Parse's) INVALID_ARGUMENT.
func Classify(err error) *xerr.Error {
	var e *xerr.Error
	if errors.As(err, &e) {
		return e
	}
	if _, ok := status.FromError(err); ok {
		return xerr.FromStatus(err)
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return xerr.Newf(xerr.TooLarge, "request body larger than %d bytes", tooLarge.Limit)
	case xerr.IsDependencyFailure(err): // context deadline and cancellation included
		return xerr.FromStatus(err)
	case err.Error() == goZeroRangeError:
		return xerr.New(xerr.InvalidArgument, outOfRange)
	default:
		return xerr.New(xerr.InvalidArgument, Clip(err.Error()))
	}
}

// maxEcho bounds what an error message repeats of a request.
const maxEcho = 200

// Clip shortens s, a message that may repeat client input, to at most maxEcho bytes and "…".
func Clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// ErrorHandler is installed with httpx.SetErrorHandlerCtx; it records its answer in ctx's Outcome.
func ErrorHandler(ctx context.Context, err error) (int, any) {
	e := Classify(err)
	record(ctx, e)
	errorsTotal.WithLabelValues(string(e.Code)).Inc()
	if e.Code == xerr.Internal {
		logc.Errorf(ctx, "internal error: %v", err)
		e = xerr.New(xerr.Internal, "internal error")
	}
	return xerr.HTTPStatus(e.Code), Body{Code: string(e.Code), Msg: e.Msg}
}

// Write writes e with the HTTP status of its code.
func Write(w http.ResponseWriter, e *xerr.Error) {
	writeStatus(w, xerr.HTTPStatus(e.Code), e)
}

func writeStatus(w http.ResponseWriter, code int, e *xerr.Error) {
	errorsTotal.WithLabelValues(string(e.Code)).Inc()
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Del("Content-Length")
	retryAfter(w.Header(), code)
	w.WriteHeader(code)
	body, _ := jsonBody(e)
	_, _ = w.Write(body)
}

// Unauthorized is go-zero's jwt UnauthorizedCallback (rest.WithUnauthorizedCallback).
func Unauthorized(w http.ResponseWriter, r *http.Request, err error) {
	e := InvalidToken(err)
	LogUnauthorized(r, e.Msg)
	Write(w, e)
}

// InvalidToken is the 401 answer to a token go-zero's parser refused with err (nil: no reason).
func InvalidToken(err error) *xerr.Error {
	if err == nil {
		return xerr.New(xerr.Unauthorized, "missing or invalid token")
	}
	return xerr.New(xerr.Unauthorized, "invalid token: "+Clip(err.Error()))
}

// NotFound answers unknown routes (rest.WithNotFoundHandler).
var NotFound = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	Write(w, xerr.New(xerr.NotFound, "no route "+Clip(r.URL.Path)))
})

// NotAllowed answers a known path with the wrong method (rest.WithNotAllowedHandler).
var NotAllowed = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	Write(w, xerr.New(xerr.MethodNotAllowed, "method "+Clip(r.Method)+" not allowed on "+Clip(r.URL.Path)))
})

// forStatus names the outcome of an error status go-zero wrote without a body.
func forStatus(code int) *xerr.Error {
	switch code {
	case http.StatusUnauthorized:
		return xerr.New(xerr.Unauthorized, "missing or invalid token")
	case http.StatusNotFound:
		return xerr.New(xerr.NotFound, "not found")
	case http.StatusMethodNotAllowed:
		return xerr.New(xerr.MethodNotAllowed, "method not allowed")
	case http.StatusRequestEntityTooLarge:
		return xerr.New(xerr.TooLarge, "request body too large")
	case http.StatusTooManyRequests:
		return xerr.New(xerr.RateLimited, "too many requests")
	case http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
		// go-zero's load shedder, breaker, MaxConns and timeout handlers.
		return xerr.New(xerr.Busy, "overloaded, retry later")
	}
	if code >= 500 {
		return xerr.New(xerr.Internal, "internal error")
	}
	return xerr.New(xerr.InvalidArgument, http.StatusText(code))
}

func isJSON(h http.Header) bool {
	return strings.HasPrefix(h.Get("Content-Type"), "application/json")
}
