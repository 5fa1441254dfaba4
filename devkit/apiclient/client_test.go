package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestReserveBody(t *testing.T) {
	for _, rid := range []string{"lg-ab12-7", `a"b\c<d>&`, "é-1234567"} {
		want, _ := json.Marshal(map[string]any{"activity_id": int64(42), "quantity": int64(3), "request_id": rid})
		if got := ReserveBody(42, 3, rid); string(got) != string(want) {
			t.Fatalf("body %s, want %s", got, want)
		}
	}
}

// Every kind of answer becomes its outcome word: 200 and 202 decoded, an error body's code
// word with its status, HTTP_<status> without one, an undecodable success, no answer.
func TestAnswersAreTyped(t *testing.T) {
	var statuses []int
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/seckill/orders", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusTeapot)
			return
		}
		var b struct {
			ActivityID int64 `json:"activity_id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&b)
		switch b.ActivityID {
		case 1:
			_, _ = w.Write([]byte(`{"order_no":"1-abcdef01","status":"reserved","expire_at":9}`))
		case 2:
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte(`{"request_id":"r-12345678","status":"queued","draw_at":7}`))
		case 3:
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"code":"SOLD_OUT","msg":"sold out"}`))
		case 4:
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte(`<html>`))
		default:
			_, _ = w.Write([]byte(`not json`))
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := New(srv.URL+"/", Options{Conns: 2, Timeout: 5 * time.Second, OnStatus: func(s int) {
		statuses = append(statuses, s)
	}})
	defer c.Close()
	ctx := context.Background()

	r, m, err := c.Reserve(ctx, "tok", ReserveBody(1, 1, "r-12345678"))
	if err != nil || m.Code != CodeOK || m.Status != 200 || r.OrderNo != "1-abcdef01" || r.ExpireAt != 9 {
		t.Fatalf("200: %+v %+v %v", r, m, err)
	}
	r, m, err = c.Reserve(ctx, "tok", ReserveBody(2, 1, "r-12345678"))
	if err != nil || m.Code != CodeQueued || r.RequestID != "r-12345678" || r.DrawAt != 7 {
		t.Fatalf("202: %+v %+v %v", r, m, err)
	}
	_, m, err = c.Reserve(ctx, "tok", ReserveBody(3, 1, "r-12345678"))
	var e *Error
	if CodeOf(err) != CodeSoldOut || m.Code != CodeSoldOut || StatusOf(err) != 409 || !errors.As(err, &e) ||
		e.Msg != "sold out" {
		t.Fatalf("409: %+v %v", m, err)
	}
	if _, _, err = c.Reserve(ctx, "tok", ReserveBody(4, 1, "r-12345678")); CodeOf(err) != "HTTP_502" {
		t.Fatalf("502 without a code: %v", err)
	}
	if _, _, err = c.Reserve(ctx, "tok", ReserveBody(5, 1, "r-12345678")); CodeOf(err) != CodeBadResponse {
		t.Fatalf("bad body: %v", err)
	}
	if _, err := c.Admin(ctx, "tok", 1); CodeOf(err) != "HTTP_404" || StatusOf(err) != 404 {
		t.Fatalf("unknown route: %v", err)
	}
	if CodeOf(nil) != CodeOK || CodeOf(errors.New("x")) != CodeRequest {
		t.Fatal("CodeOf of nil or a foreign error")
	}
	srv.Close()
	if _, m, err = c.Reserve(ctx, "tok", ReserveBody(1, 1, "r-12345678")); CodeOf(err) != CodeTransport ||
		m.Code != CodeTransport || StatusOf(err) != 0 {
		t.Fatalf("no server: %+v %v", m, err)
	}
	want := []int{200, 202, 409, 502, 200, 404, 0}
	if len(statuses) != len(want) {
		t.Fatalf("statuses seen %v, want %v", statuses, want)
	}
	for i := range want {
		if statuses[i] != want[i] {
			t.Fatalf("statuses seen %v, want %v", statuses, want)
		}
	}
}

// A redirect is answered as it is, never followed (it could point anywhere).
func TestClientDoesNotFollowRedirects(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/seckill/orders", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	c := New(srv.URL, Options{Conns: 1, Timeout: 5 * time.Second})
	defer c.Close()
	_, m, _ := c.Reserve(context.Background(), "", []byte(`{}`))
	if m.Code == CodeOK || elsewhere.Load() != 0 {
		t.Fatalf("redirect followed: %s, %d requests elsewhere", m.Code, elsewhere.Load())
	}
}

// A pinned client dials the pinned address whatever the URL's host (.invalid never
// resolves).
func TestPinnedDial(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c := New("http://seckill.invalid:"+port, Options{Conns: 1, Pinned: "127.0.0.1:" + port})
	defer c.Close()
	if h, err := c.Healthz(context.Background()); err != nil || h.Status != "ok" {
		t.Fatalf("pinned dial: %+v %v", h, err)
	}
}

// Merchant calls send their bodies and decode their answers.
func TestMerchantCalls(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/admin/activities", func(w http.ResponseWriter, r *http.Request) {
		var a NewActivity
		_ = json.NewDecoder(r.Body).Decode(&a)
		_ = json.NewEncoder(w).Encode(Activity{ActivityID: 7, Stock: a.Stock, DrawSeconds: a.DrawSeconds})
	})
	mux.HandleFunc("POST /v1/admin/activities/7/stock", func(w http.ResponseWriter, r *http.Request) {
		var d struct{ Delta int64 }
		_ = json.NewDecoder(r.Body).Decode(&d)
		_ = json.NewEncoder(w).Encode(Adjusted{Total: 10 + d.Delta})
	})
	mux.HandleFunc("GET /v1/admin/activities", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"activities":[{"activity_id":7}],"page":` + r.URL.Query().Get("page") + `,"total":1}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := New(srv.URL, Options{})
	ctx := context.Background()
	if a, err := c.Create(ctx, "m", NewActivity{Stock: 5, DrawSeconds: 3}); err != nil || a.ActivityID != 7 ||
		a.Stock != 5 || a.DrawSeconds != 3 {
		t.Fatalf("create: %+v %v", a, err)
	}
	if a, err := c.Adjust(ctx, "m", 7, -4); err != nil || a.Total != 6 {
		t.Fatalf("adjust: %+v %v", a, err)
	}
	if l, err := c.List(ctx, "m", 2, 20); err != nil || l.Page != 2 || len(l.Activities) != 1 {
		t.Fatalf("list: %+v %v", l, err)
	}
}

// Send hands back the answer's body as read, beside the same Meta and error as Do.
func TestSendReturnsTheBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/no" {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"code":"BUSY","msg":"overloaded"}`))
			return
		}
		_, _ = w.Write([]byte(`{"code":"SOLD_OUT"}`))
	}))
	defer srv.Close()
	c := New(srv.URL, Options{})
	m, body, err := c.Send(context.Background(), http.MethodPost, "/yes", "", []byte(`{}`))
	if err != nil || m.Code != CodeOK || string(body) != `{"code":"SOLD_OUT"}` {
		t.Fatalf("200: %+v %s %v", m, body, err)
	}
	m, body, err = c.Send(context.Background(), http.MethodPost, "/no", "", nil)
	if CodeOf(err) != CodeBusy || m.Status != 503 || string(body) != `{"code":"BUSY","msg":"overloaded"}` {
		t.Fatalf("503: %+v %s %v", m, body, err)
	}
}

// WithHeader's client sends its headers besides the client's own; Meta carries the answer's.
func TestHeaders(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Traceparent", r.Header.Get("Traceparent")+"-back")
		_, _ = w.Write([]byte(`{"order_no":"1-abcdef01","status":"paid"}`))
	}))
	defer srv.Close()
	c := New(srv.URL, Options{})
	_, m, err := c.WithHeader(http.Header{"Traceparent": {"00-abc"}}).Pay(context.Background(), "tok", "1-abcdef01")
	if err != nil || m.Header.Get("Traceparent") != "00-abc-back" {
		t.Fatalf("pay: %+v %v", m, err)
	}
	if _, m, _ = c.Pay(context.Background(), "tok", "1-abcdef01"); m.Header.Get("Traceparent") != "-back" {
		t.Fatalf("the header stuck to the original client: %+v", m)
	}
}
