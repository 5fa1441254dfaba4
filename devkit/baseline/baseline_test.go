package baseline

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/conf"
	"github.com/zeromicro/go-zero/rest"
	"github.com/zeromicro/go-zero/zrpc"

	"github.com/seckill/seckill/internal/authtoken"
)

func TestChecks(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		status                    int
		body                      string
		reserved, soldOut, bareOK bool
	}{
		{"reservation", 200, `{"order_no":"7-1700000000000ab","status":"reserved"}`, true, false, false},
		{"200 without order_no", 200, `{"status":"reserved"}`, false, false, false},
		{"200 empty order_no", 200, `{"order_no":""}`, false, false, false},
		{"200 not json", 200, `order_no`, false, false, false},
		{"sold out", 409, `{"code":"SOLD_OUT","msg":"sold out"}`, false, true, false},
		{"sold out with 200", 200, `{"code":"SOLD_OUT"}`, false, false, true},
		{"409 other code", 409, `{"code":"LIMIT_EXCEEDED","msg":"x"}`, false, false, false},
		{"503 with sold out code", 503, `{"code":"SOLD_OUT"}`, false, false, false},
		{"409 plain text", 409, `SOLD_OUT`, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := []byte(tc.body)
			if got := IsReserved(tc.status, b); got != tc.reserved {
				t.Errorf("IsReserved = %v", got)
			}
			if got := IsSoldOut(tc.status, b); got != tc.soldOut {
				t.Errorf("IsSoldOut = %v", got)
			}
			if got := IsBare(tc.status, b); got != tc.bareOK {
				t.Errorf("IsBare = %v", got)
			}
		})
	}
}

func TestOutcome(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{429, `{"code":"RATE_LIMITED","msg":"slow down"}`, "HTTP_429 RATE_LIMITED"},
		{503, `Service Unavailable`, "HTTP_503"},
		{200, `{}`, "HTTP_200"},
	} {
		if got := Outcome(tc.status, []byte(tc.body)); got != tc.want {
			t.Errorf("Outcome(%d, %s) = %q, want %q", tc.status, tc.body, got, tc.want)
		}
	}
}

// TestLoadCounts: every request is sent once, only well-formed answers count, the rest
// are listed by outcome.
func TestLoadCounts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i, err := strconv.Atoi(r.URL.Query().Get("i"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		switch i % 10 {
		case 3:
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"code":"RATE_LIMITED","msg":"x"}`))
		case 7:
			_, _ = w.Write([]byte(`{"order_no":""}`)) // 200, but not a reservation
		default:
			_, _ = fmt.Fprintf(w, `{"order_no":"o-%d"}`, i)
		}
	}))
	defer srv.Close()
	seen := make([]int, 200)
	r := Load(context.Background(), LoadConfig{Concurrency: 8, Requests: 200}, srv.URL, func(i int) (Request, error) {
		seen[i]++ // each i is handed to exactly one worker
		return Request{Method: http.MethodGet, Path: fmt.Sprintf("/?i=%d", i)}, nil
	}, IsReserved)
	for i, n := range seen {
		if n != 1 {
			t.Fatalf("request %d built %d times", i, n)
		}
	}
	if r.Sent != 200 || r.Good != 160 || r.NotSent != 0 || len(r.Latencies) != 200 {
		t.Fatalf("sent %d good %d not sent %d latencies %d, want 200 160 0 200",
			r.Sent, r.Good, r.NotSent, len(r.Latencies))
	}
	if r.Other["HTTP_429 RATE_LIMITED"] != 20 || r.Other["HTTP_200"] != 20 || r.OtherCount() != 40 {
		t.Fatalf("other = %v", r.Other)
	}
	if r.Elapsed <= 0 || r.Rate() <= 0 {
		t.Fatalf("elapsed %s rate %f", r.Elapsed, r.Rate())
	}
}

func TestLoadTransportErrorsAndBounds(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	if err := l.Close(); err != nil { // nothing listens there any more
		t.Fatal(err)
	}

	lc := LoadConfig{Concurrency: 4, Requests: 12, Timeout: 2 * time.Second}
	r := Load(context.Background(), lc, dead, func(i int) (Request, error) {
		if i == 0 {
			return Request{}, fmt.Errorf("cannot build")
		}
		return Request{Method: http.MethodGet}, nil
	}, IsReserved)
	if r.Good != 0 || r.Other[OutcomeTransport] != 11 || r.Other[OutcomeRequest] != 1 || r.Sent != 11 {
		t.Fatalf("good %d other %v sent %d, want 0, 11 transport + 1 request error, 11 sent",
			r.Good, r.Other, r.Sent)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r = Load(ctx, LoadConfig{Concurrency: 4, Requests: 30}, dead, func(i int) (Request, error) {
		t.Error("a request was built after the context ended")
		return Request{Method: http.MethodGet}, nil
	}, IsReserved)
	if r.NotSent != 30 || r.Sent != 0 {
		t.Fatalf("not sent %d sent %d, want 30 0", r.NotSent, r.Sent)
	}
}

func restConf(t *testing.T) rest.RestConf {
	t.Helper()
	var c rest.RestConf
	if err := conf.FillDefault(&c); err != nil {
		t.Fatal(err)
	}
	c.Name, c.Host, c.Mode = "baseline-test", "127.0.0.1", "test"
	c.Log.Level, c.Log.Stat = "severe", false
	return c
}

func post(path, token string) Request {
	return Request{Path: path, Token: token, Body: []byte(`{"activity_id":1,"request_id":"r-1","quantity":1}`)}
}

func TestBare(t *testing.T) {
	s, err := StartBare(restConf(t))
	if err != nil {
		t.Fatal(err)
	}
	r := Load(context.Background(), LoadConfig{Concurrency: 4, Requests: 40}, s.URL, func(int) (Request, error) {
		return post(BarePath, ""), nil
	}, IsBare)
	if r.Good != 40 {
		t.Fatalf("good %d of 40, other %v", r.Good, r.Other)
	}
	// The route is the only one.
	r = Load(context.Background(), LoadConfig{Concurrency: 1, Requests: 1}, s.URL, func(int) (Request, error) {
		return post("/other", ""), nil
	}, IsBare)
	if r.Other["HTTP_404"] != 1 {
		t.Fatalf("other route: %v", r.Other)
	}
	s.Close()
	lc := LoadConfig{Concurrency: 1, Requests: 1, Timeout: 2 * time.Second}
	r = Load(context.Background(), lc, s.URL, func(int) (Request, error) {
		return post(BarePath, ""), nil
	}, IsBare)
	if r.Other[OutcomeTransport] != 1 {
		t.Fatalf("after Close: %v", r.Other)
	}
}

// TestEchoNeedsTokenAndRPC: the echo answers only with a valid token and only after its
// zRPC call succeeded (here the inventory service is not there: a working echo is covered
// by the api benchmarks and benchrun's end-to-end test).
func TestEchoNeedsTokenAndRPC(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadRPC := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	const secret = "baseline-test-secret-0123456789"
	s, err := StartEcho(restConf(t), secret, zrpc.RpcClientConf{Endpoints: []string{deadRPC}, NonBlock: true,
		Timeout: 500})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	good, err := authtoken.Buyer(secret, 1, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	forged, err := authtoken.Buyer("another-secret-0123456789abc", 1, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, token string
	}{{"no token", ""}, {"forged token", forged}, {"valid token, rpc down", good}} {
		t.Run(tc.name, func(t *testing.T) {
			lc := LoadConfig{Concurrency: 1, Requests: 1, Timeout: 5 * time.Second}
			r := Load(context.Background(), lc, s.URL, func(int) (Request, error) {
				return post(EchoPath, tc.token), nil
			}, IsReserved)
			if r.Good != 0 || r.OtherCount() != 1 || r.Other[OutcomeTransport] != 0 {
				t.Fatalf("good %d other %v: want one HTTP answer that is not a reservation", r.Good, r.Other)
			}
			if tc.token != good && r.Other["HTTP_401"] != 1 {
				t.Fatalf("other %v, want HTTP_401", r.Other)
			}
		})
	}
}
