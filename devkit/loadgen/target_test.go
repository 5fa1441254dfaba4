package loadgen

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
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
	defer c.Close()
	if _, err := c.Healthz(context.Background()); err != nil {
		t.Fatalf("pinned dial: %v", err)
	}
	if p, err := checkTarget(context.Background(), "http://localhost:"+port, false); err != nil ||
		!strings.HasSuffix(p, ":"+port) ||
		!net.ParseIP(strings.Trim(p[:strings.LastIndex(p, ":")], "[]")).IsLoopback() {
		t.Fatalf("localhost: %q %v", p, err)
	}
}
