package reply_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/breaker"
	"github.com/zeromicro/go-zero/core/load"
	"github.com/zeromicro/go-zero/core/stat"
	"github.com/zeromicro/go-zero/rest/handler"
	"github.com/zeromicro/go-zero/rest/httpx"
	"github.com/zeromicro/go-zero/rest/router"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seckill/seckill/api/internal/reply"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/internal/xerr"
)

type overloaded struct{}

func (overloaded) Allow() (load.Promise, error) { return nil, load.ErrServiceOverloaded }

// serve mounts h behind reply.Router at GET /x and returns the response.
func serve(t *testing.T, h http.Handler, req *http.Request) (int, reply.Body, http.Header) {
	t.Helper()
	r := router.NewRouter()
	if err := r.Handle(http.MethodGet, "/x", h); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	reply.Router{Router: r, MaxBytes: 64}.ServeHTTP(rec, req)
	var b reply.Body
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil && rec.Code >= 400 {
		t.Fatalf("status %d with a non-JSON body %q", rec.Code, rec.Body.String())
	}
	return rec.Code, b, rec.Header()
}

// go-zero's own middlewares write bare statuses; behind reply.Router they carry a body.
func TestGoZeroBareErrorsGetBodies(t *testing.T) {
	httpx.SetErrorHandlerCtx(reply.ErrorHandler)
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { httpx.OkJson(w, map[string]int{"a": 1}) })
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Second):
		}
	})
	metrics := stat.NewMetrics("reply-test")
	get := func() *http.Request { return httptest.NewRequest(http.MethodGet, "/x", nil) }
	big := httptest.NewRequest(http.MethodGet, "/x", strings.NewReader(strings.Repeat("x", 100)))

	for _, tc := range []struct {
		name   string
		h      http.Handler
		req    *http.Request
		status int
		code   xerr.Code
	}{
		{"load shedding", handler.SheddingHandler(overloaded{}, metrics)(ok), get(), 503, xerr.Busy},
		{"max bytes", handler.MaxBytesHandler(64)(ok), big, 413, xerr.TooLarge},
		{"timeout", handler.TimeoutHandler(10 * time.Millisecond)(slow), get(), 503, xerr.Busy},
		{"plain-text http.Error", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom", http.StatusBadGateway)
		}), get(), 502, xerr.Busy},
		{"panic recovered", handler.RecoverHandler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
			panic("test panic")
		})), get(), 500, xerr.Internal},
		{"unknown route", http.NotFoundHandler(), httptest.NewRequest(http.MethodGet, "/nope", nil), 404,
			xerr.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body, hdr := serve(t, tc.h, tc.req)
			if code != tc.status || body.Code != string(tc.code) || body.Msg == "" {
				t.Fatalf("got %d %+v, want %d %s", code, body, tc.status, tc.code)
			}
			if !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
				t.Fatalf("content type %q", hdr.Get("Content-Type"))
			}
		})
	}
	t.Run("success passes through", func(t *testing.T) {
		code, _, _ := serve(t, ok, get())
		if code != 200 {
			t.Fatalf("status %d", code)
		}
	})
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want xerr.Code
	}{
		{"typed", xerr.ErrSoldOut, xerr.SoldOut},
		{"wrapped typed", fmt.Errorf("ctx: %w", xerr.ErrLimitExceeded), xerr.LimitExceeded},
		{"zrpc business outcome", xerr.ToStatus(xerr.ErrOrderPaid), xerr.OrderPaid},
		{"zrpc not found", xerr.ToStatus(xerr.ErrActivityNotFound), xerr.ActivityNotFound},
		{"zrpc unavailable", status.Error(codes.Unavailable, "down"), xerr.Busy},
		{"zrpc deadline", status.Error(codes.DeadlineExceeded, "slow"), xerr.Busy},
		{"zrpc internal", status.Error(codes.Internal, "bug"), xerr.Internal},
		{"zrpc internal answered with our detail", xerr.ToStatus(errors.New("duplicate entry")), xerr.Internal},
		{"zrpc cancelled (client connection closing)", status.Error(codes.Canceled,
			"grpc: the client connection is closing"), xerr.Busy},
		{"zrpc stream broken mid-answer", status.Error(codes.Internal, "unexpected EOF"), xerr.Busy},
		{"zrpc stream reset", status.Error(codes.Internal,
			"stream terminated by RST_STREAM with error code: INTERNAL_ERROR"), xerr.Busy},
		{"zrpc app refused", status.Error(codes.Unauthenticated, "missing metadata"), xerr.Internal},
		{"body too large", &http.MaxBytesError{Limit: 10}, xerr.TooLarge},
		{"timeout", context.DeadlineExceeded, xerr.Busy},
		{"cancelled", context.Canceled, xerr.Busy},
		{"parse failure", errors.New(`field "activity_id" is not set`), xerr.InvalidArgument},
		// go-zero's client breaker answers without calling: "circuit breaker is open" is
		// not the client's fault and must be retried (it was 400 INVALID_ARGUMENT).
		{"breaker open", breaker.ErrServiceUnavailable, xerr.Busy},
		{"wrapped breaker open", fmt.Errorf("rate limit: %w", breaker.ErrServiceUnavailable), xerr.Busy},
		{"connection refused", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, xerr.Busy},
		{"zrpc dependency unavailable", xerr.ToStatus(xerr.Unavailable(errors.New("redis: i/o timeout"))), xerr.Busy},
		{"zrpc untyped timeout", xerr.ToStatus(fmt.Errorf("query: %w", context.DeadlineExceeded)), xerr.Busy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := reply.Classify(tc.err).Code; got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
	t.Run("internal details stay in the log", func(t *testing.T) {
		code, body := reply.ErrorHandler(context.Background(), xerr.New(xerr.Internal, "dsn root:secret@tcp"))
		if code != 500 || body.(reply.Body).Msg != "internal error" {
			t.Fatalf("got %d %+v", code, body)
		}
	})
}

// TestRangeTagsAnswerInvalidArgument: go-zero's httpx.Parse enforces the range= tags of
// api/seckill.api (docs/API.md "Bounds"), and its answer is 400 INVALID_ARGUMENT with a message
// saying what is wrong.
func TestRangeTagsAnswerInvalidArgument(t *testing.T) {
	for _, body := range []string{
		`{"sku_id":1,"name":"n","stock":0,"start_time":1,"end_time":2}`,
		`{"sku_id":1,"name":"n","stock":1000000001,"start_time":1,"end_time":2}`,
		`{"sku_id":1,"name":"n","stock":1,"start_time":1,"end_time":2,"pay_timeout_seconds":86401}`,
		`{"sku_id":1,"name":"n","stock":1,"start_time":1,"end_time":2,"draw_seconds":-1}`,
	} {
		r := httptest.NewRequest(http.MethodPost, "/v1/admin/activities", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		var req types.CreateActivityReq
		err := httpx.Parse(r, &req)
		if err == nil {
			t.Errorf("%s: parsed as %+v", body, req)
			continue
		}
		if e := reply.Classify(err); e.Code != xerr.InvalidArgument || !strings.Contains(e.Msg, "out of its range") {
			t.Errorf("%s: %v -> %s %q", body, err, e.Code, e.Msg)
		}
	}
}
