package reserve_test

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
	"github.com/seckill/seckill/api/internal/reply"
	"github.com/seckill/seckill/api/internal/reserve"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/api/internal/validate"
	"github.com/seckill/seckill/internal/xerr"
)

const soldOutAID = 5

func testMarks() *edge.Marks {
	return edge.New(edge.Conf{Enabled: true, SoldOutTTL: time.Minute, WindowTTL: time.Minute, ClockMargin: time.Second})
}

// route is the Route middleware of a pipeline answering from marks.
func route(marks *edge.Marks, next http.HandlerFunc) http.HandlerFunc {
	return reserve.New(reserve.Stages{Decode: edge.Decode, Gate: edge.NewGate(marks, nil)}, reserve.Front{}).Route(next)
}

// reserveEdge is the route's middleware with activity soldOutAID marked, before a handler
// that echoes the reservation it was handed.
func reserveEdge(t *testing.T) (http.HandlerFunc, *edge.Marks) {
	t.Helper()
	httpx.SetErrorHandlerCtx(reply.ErrorHandler)
	marks := testMarks()
	marks.SoldOut(soldOutAID, marks.Gen())
	return route(marks,
		func(w http.ResponseWriter, r *http.Request) {
			req, ok := reserve.Request(r.Context())
			if !ok {
				t.Error("the handler got no reservation")
				return
			}
			w.Header().Set("X-Next", "called")
			_ = json.NewEncoder(w).Encode(req)
		}), marks
}

func buyerRequest(t *testing.T, body io.Reader, n int64) *http.Request {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/v1/seckill/orders", body)
	r.ContentLength = n
	r.Header.Set("Content-Type", "application/json")
	return r.WithContext(auth.WithUID(r.Context(), 42))
}

// viaParse is what the reservation route answered before the edge: go-zero's httpx.Parse
// in the handler, then ReserveLogic's buyer, input and mark checks.
func viaParse(r *http.Request, marks *edge.Marks) (*types.ReserveReq, error) {
	var req types.ReserveReq
	if err := httpx.Parse(r, &req); err != nil {
		return nil, err
	}
	if _, err := auth.UID(r.Context()); err != nil {
		return nil, err
	}
	if err := validate.Reserve(&req); err != nil {
		return nil, err
	}
	if err := marks.Check(req.ActivityId); err != nil {
		return nil, err
	}
	return &req, nil
}

// sameAnswer checks that the middleware answers newReq() as viaParse does: the same
// error response, or the handler with the same reservation.
func sameAnswer(t *testing.T, name string, newReq func() *http.Request) {
	t.Helper()
	h, marks := reserveEdge(t)
	got := httptest.NewRecorder()
	h(got, newReq())
	want := httptest.NewRecorder()
	if req, err := viaParse(newReq(), marks); err != nil {
		httpx.ErrorCtx(context.Background(), want, err)
	} else {
		want.Header().Set("X-Next", "called")
		_ = json.NewEncoder(want).Encode(req)
	}
	if got.Code != want.Code || got.Body.String() != want.Body.String() ||
		got.Header().Get("X-Next") != want.Header().Get("X-Next") {
		t.Errorf("%s: got %d %q (next %q), want %d %q (next %q)", name, got.Code, got.Body, got.Header().Get("X-Next"),
			want.Code, want.Body, want.Header().Get("X-Next"))
	}
}

// TestRouteAnswersSoldOut: a valid reservation of a marked activity is answered 409
// SOLD_OUT without the handler; of another activity it reaches the handler decoded.
func TestRouteAnswersSoldOut(t *testing.T) {
	h, _ := reserveEdge(t)
	body := `{"activity_id":5,"quantity":1,"request_id":"abcdefgh"}`
	w := httptest.NewRecorder()
	h(w, buyerRequest(t, strings.NewReader(body), int64(len(body))))
	if w.Code != http.StatusConflict || w.Header().Get("X-Next") != "" || !strings.Contains(w.Body.String(), "SOLD_OUT") {
		t.Fatalf("sold-out activity: %d %q, next %q; want 409 SOLD_OUT by the middleware", w.Code, w.Body,
			w.Header().Get("X-Next"))
	}
	other := `{"activity_id":6,"request_id":"abcdefgh"}`
	w = httptest.NewRecorder()
	h(w, buyerRequest(t, strings.NewReader(other), int64(len(other))))
	want := `{"activity_id":6,"quantity":1,"request_id":"abcdefgh"}` + "\n"
	if w.Code != http.StatusOK || w.Header().Get("X-Next") != "called" || w.Body.String() != want {
		t.Fatalf("unmarked activity: %d %q; want the handler with %q", w.Code, w.Body, want)
	}
}

// TestRouteAnswersAsParse: whatever the fast decoder does not take (bad input, a body
// it does not decode, another transfer) is answered as httpx.Parse and the checks answer it.
func TestRouteAnswersAsParse(t *testing.T) {
	for _, body := range []string{
		`{"activity_id":5,"quantity":0,"request_id":"abcdefgh"}`,                    // quantity out of bounds: 400
		`{"activity_id":5,"request_id":"short"}`,                                    // request_id too short: 400
		`{"activity_id":5,"request_id":"abcdefgh","quantity":"1"}`,                  // a string
		`{"activity_id":5,"request_id":"abcdefgh"} trailing`,                        // left to go-zero
		`{"activity_id":5,"request_id":"abcdefgh","extra":true}`,                    // an unknown key
		`{"activity_id":5,"activity_id":5,"request_id":"abcdefgh"}`,                 // a repeated key
		`{"activity_id":5,"request_id":"abcdefgh"` + strings.Repeat(" ", 600) + `}`, // longer than the fast path reads
		`{"activity_id":6,"request_id":"abcdefgh","extra":true}`,                    // unmarked, by httpx.Parse
		`{"activity_id":6,"request_id":"abcdefgh"}`,                                 // unmarked, fast
	} {
		sameAnswer(t, body, func() *http.Request { return buyerRequest(t, strings.NewReader(body), int64(len(body))) })
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
		sameAnswer(t, name, func() *http.Request {
			r := buyerRequest(t, strings.NewReader(valid), int64(len(valid)))
			tweak(r)
			return r
		})
	}
}

// TestRouteKeepsReadErrors: a body whose read fails is answered as httpx.Parse
// answers the bytes read and then the same error.
func TestRouteKeepsReadErrors(t *testing.T) {
	boom := errors.New("connection reset")
	prefix := `{"activity_id":5,`
	sameAnswer(t, "read error", func() *http.Request {
		return buyerRequest(t, io.MultiReader(strings.NewReader(prefix), &failing{boom}), 40)
	})
}

type failing struct{ err error }

func (f *failing) Read([]byte) (int, error) { return 0, f.err }

// TestRouteAnswersAsErrorCtx: each answer of the middleware (sold out, not started,
// ended) is, status, headers and body bytes, what httpx.ErrorCtx writes for the same
// error with the gateway's error handler.
func TestRouteAnswersAsErrorCtx(t *testing.T) {
	httpx.SetErrorHandlerCtx(reply.ErrorHandler)
	now := time.Now()
	marks := testMarks()
	marks.SoldOut(1, marks.Gen())
	marks.Window(2, now.Add(time.Hour).Unix(), now.Add(2*time.Hour).Unix(), marks.WindowGen())
	marks.Window(3, now.Add(-2*time.Hour).Unix(), now.Add(-time.Hour).Unix(), marks.WindowGen())
	h := route(marks, func(w http.ResponseWriter, r *http.Request) { t.Error("the handler ran") })
	for aid, e := range map[int]*xerr.Error{1: xerr.ErrSoldOut, 2: xerr.ErrNotStarted, 3: xerr.ErrEnded} {
		body := `{"activity_id":` + strconv.Itoa(aid) + `,"request_id":"abcdefgh"}`
		got := httptest.NewRecorder()
		h(got, buyerRequest(t, strings.NewReader(body), int64(len(body))))
		want := httptest.NewRecorder()
		httpx.ErrorCtx(context.Background(), want, e)
		if got.Code != want.Code || !reflect.DeepEqual(got.Header(), want.Header()) ||
			got.Body.String() != want.Body.String() {
			t.Errorf("activity %d: %d %v %q; httpx.ErrorCtx(%s): %d %v %q", aid, got.Code, got.Header(), got.Body,
				e.Code, want.Code, want.Header(), want.Body)
		}
	}
}

// TestRouteObserves: a SOLD_OUT answer of the handler (the inventory service's)
// sets the activity's mark; another answer does not.
func TestRouteObserves(t *testing.T) {
	httpx.SetErrorHandlerCtx(reply.ErrorHandler)
	marks := testMarks()
	answer := map[int64]error{7: xerr.ErrSoldOut, 8: xerr.New(xerr.LimitExceeded, "limit")}
	h := route(marks, func(w http.ResponseWriter, r *http.Request) {
		req, _ := reserve.Request(r.Context())
		httpx.ErrorCtx(r.Context(), w, answer[req.ActivityId])
	})
	for aid, want := range map[int64]error{7: xerr.ErrSoldOut, 8: nil} {
		body := `{"activity_id":` + strconv.FormatInt(aid, 10) + `,"request_id":"abcdefgh"}`
		h(httptest.NewRecorder(), buyerRequest(t, strings.NewReader(body), int64(len(body))))
		if got := marks.Check(aid); got != want {
			t.Errorf("activity %d after a %v answer: marks say %v, want %v", aid, answer[aid], got, want)
		}
	}
}
