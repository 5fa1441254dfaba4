package loadgen

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The address checkTarget approved is the one the client dials: the URL's host is not
// looked up again (here it cannot be: .invalid never resolves).
func TestClientDialsTheCheckedAddress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	pinned, err := checkTarget(context.Background(), "http://127.0.0.1:"+port, false)
	if err != nil || pinned != "127.0.0.1:"+port {
		t.Fatalf("checkTarget: %q %v", pinned, err)
	}
	c := newClient("http://seckill.invalid:"+port, 1, 5*time.Second, pinned)
	defer c.close()
	if code, _, err := c.call(context.Background(), http.MethodGet, "/healthz", "", nil, nil); code != CodeOK {
		t.Fatalf("pinned dial: %s %v", code, err)
	}
	if p, err := checkTarget(context.Background(), "http://localhost:"+port, false); err != nil || !strings.HasSuffix(p, ":"+port) ||
		!net.ParseIP(strings.Trim(p[:strings.LastIndex(p, ":")], "[]")).IsLoopback() {
		t.Fatalf("localhost: %q %v", p, err)
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
	pinned, err := checkTarget(context.Background(), srv.URL, false)
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(srv.URL, 1, 5*time.Second, pinned)
	defer c.close()
	code, _, _ := c.call(context.Background(), http.MethodPost, "/v1/seckill/orders", "", map[string]any{}, nil)
	if code == CodeOK || elsewhere.Load() != 0 {
		t.Fatalf("redirect followed: %s, %d requests elsewhere", code, elsewhere.Load())
	}
}
