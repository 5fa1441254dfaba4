package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/edge"
	"github.com/seckill/seckill/api/internal/middleware"
	"github.com/seckill/seckill/api/internal/reply"
	"github.com/seckill/seckill/internal/xerr"
)

const soldOutAID = 5

func reserveEdge(t *testing.T) http.HandlerFunc {
	t.Helper()
	httpx.SetErrorHandlerCtx(reply.ErrorHandler)
	marks := edge.New(edge.Conf{Enabled: true, SoldOutTTL: time.Minute, WindowTTL: time.Minute, ClockMargin: time.Second})
	marks.SoldOut(soldOutAID, marks.Gen())
	return middleware.NewReserveEdgeMiddleware(marks).Handle(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		w.Header().Set("X-Next", "called")
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"body": string(b), "err": msg})
	})
}

func buyerRequest(t *testing.T, body io.Reader, n int64) *http.Request {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/v1/seckill/orders", body)
	r.ContentLength = n
	r.Header.Set("Content-Type", "application/json")
	ctx, err := auth.WithBuyer(context.WithValue(r.Context(), "uid", json.Number("42")))
	if err != nil {
		t.Fatal(err)
	}
	return r.WithContext(ctx)
}

// serve returns the status, whether the handler ran, and what it read.
func serve(t *testing.T, h http.HandlerFunc, r *http.Request) (int, bool, string, string) {
	t.Helper()
	w := httptest.NewRecorder()
	h(w, r)
	var got struct{ Body, Err, Code string }
	_ = json.Unmarshal(w.Body.Bytes(), &got)
	if w.Header().Get("X-Next") != "called" {
		return w.Code, false, got.Code, ""
	}
	return w.Code, true, got.Body, got.Err
}

// TestReserveEdgeAnswersSoldOut: a valid reservation of a marked activity is answered 409
// SOLD_OUT without the handler; of another activity it reaches the handler with its body.
func TestReserveEdgeAnswersSoldOut(t *testing.T) {
	h := reserveEdge(t)
	body := `{"activity_id":5,"quantity":1,"request_id":"abcdefgh"}`
	code, next, word, _ := serve(t, h, buyerRequest(t, strings.NewReader(body), int64(len(body))))
	if code != http.StatusConflict || next || word != "SOLD_OUT" {
		t.Fatalf("sold-out activity: %d, handler ran %v, code %q; want 409 SOLD_OUT by the middleware", code, next, word)
	}
	other := `{"activity_id":6,"request_id":"abcdefgh"}`
	code, next, read, _ := serve(t, h, buyerRequest(t, strings.NewReader(other), int64(len(other))))
	if code != http.StatusOK || !next || read != other {
		t.Fatalf("unmarked activity: %d, handler ran %v, read %q; want the handler with the whole body", code, next, read)
	}
}

// TestReserveEdgeLeavesTheRestToTheHandler: whatever the middleware cannot answer exactly
// as the handler would (bad input for the activity that is sold out, a body it does not
// decode, another transfer) reaches the handler with the same bytes.
func TestReserveEdgeLeavesTheRestToTheHandler(t *testing.T) {
	h := reserveEdge(t)
	for _, body := range []string{
		`{"activity_id":5,"quantity":0,"request_id":"abcdefgh"}`,                    // quantity out of bounds: 400
		`{"activity_id":5,"request_id":"short"}`,                                    // request_id too short: 400
		`{"activity_id":5,"request_id":"abcdefgh","quantity":"1"}`,                  // a string
		`{"activity_id":5,"request_id":"abcdefgh"} trailing`,                        // left to go-zero
		`{"activity_id":5,"request_id":"abcdefgh","extra":true}`,                    // an unknown key
		`{"activity_id":5,"activity_id":5,"request_id":"abcdefgh"}`,                 // a repeated key
		`{"activity_id":5,"request_id":"abcdefgh"` + strings.Repeat(" ", 600) + `}`, // longer than the fast path reads
	} {
		code, next, read, _ := serve(t, h, buyerRequest(t, strings.NewReader(body), int64(len(body))))
		if code != http.StatusOK || !next || read != body {
			t.Errorf("%.60q: %d, handler ran %v, read %q; want the handler with the whole body", body, code, next, read)
		}
	}
	valid := `{"activity_id":5,"request_id":"abcdefgh"}`
	for name, tweak := range map[string]func(*http.Request){
		"chunked": func(r *http.Request) { r.ContentLength = -1 },
		"gzip":    func(r *http.Request) { r.Header.Set("Content-Encoding", "gzip") },
		"query":   func(r *http.Request) { r.URL.RawQuery = "activity_id=5" },
		"form": func(r *http.Request) {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded; application/json")
		},
		"no buyer":      func(r *http.Request) { *r = *r.WithContext(context.Background()) },
		"short content": func(r *http.Request) { r.ContentLength = int64(len(valid)) + 5 },
	} {
		r := buyerRequest(t, strings.NewReader(valid), int64(len(valid)))
		tweak(r)
		code, next, read, _ := serve(t, h, r)
		if code != http.StatusOK || !next || read != valid {
			t.Errorf("%s: %d, handler ran %v, read %q; want the handler with the whole body", name, code, next, read)
		}
	}
}

// TestReserveEdgeKeepsReadErrors: a body whose read fails reaches the handler with the
// bytes read and then the same error.
func TestReserveEdgeKeepsReadErrors(t *testing.T) {
	h := reserveEdge(t)
	boom := errors.New("connection reset")
	prefix := `{"activity_id":5,`
	body := io.MultiReader(strings.NewReader(prefix), &failing{boom})
	code, next, read, msg := serve(t, h, buyerRequest(t, body, 40))
	if code != http.StatusOK || !next || read != prefix || msg != boom.Error() {
		t.Fatalf("%d, handler ran %v, read %q, error %q; want the handler, %q then %q", code, next, read, msg, prefix, boom)
	}
}

type failing struct{ err error }

func (f *failing) Read([]byte) (int, error) { return 0, f.err }

// TestReserveEdgeAnswersAsErrorCtx: each answer of the middleware (sold out, not started,
// ended) is, status, headers and body bytes, what httpx.ErrorCtx writes for the same
// error with the gateway's error handler.
func TestReserveEdgeAnswersAsErrorCtx(t *testing.T) {
	httpx.SetErrorHandlerCtx(reply.ErrorHandler)
	now := time.Now()
	marks := edge.New(edge.Conf{Enabled: true, SoldOutTTL: time.Minute, WindowTTL: time.Minute, ClockMargin: time.Second})
	marks.SoldOut(1, marks.Gen())
	marks.Window(2, now.Add(time.Hour).Unix(), now.Add(2*time.Hour).Unix())
	marks.Window(3, now.Add(-2*time.Hour).Unix(), now.Add(-time.Hour).Unix())
	h := middleware.NewReserveEdgeMiddleware(marks).Handle(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the handler ran")
	})
	for aid, e := range map[int]*xerr.Error{1: xerr.ErrSoldOut, 2: xerr.ErrNotStarted, 3: xerr.ErrEnded} {
		body := `{"activity_id":` + strconv.Itoa(aid) + `,"request_id":"abcdefgh"}`
		got := httptest.NewRecorder()
		h(got, buyerRequest(t, strings.NewReader(body), int64(len(body))))
		want := httptest.NewRecorder()
		httpx.ErrorCtx(context.Background(), want, e)
		if got.Code != want.Code || !reflect.DeepEqual(got.Header(), want.Header()) || got.Body.String() != want.Body.String() {
			t.Errorf("activity %d: %d %v %q; httpx.ErrorCtx(%s): %d %v %q", aid, got.Code, got.Header(), got.Body,
				e.Code, want.Code, want.Header(), want.Body)
		}
	}
}
