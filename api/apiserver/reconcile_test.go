package apiserver_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/seckill/seckill/api/apiserver"
)

// A comparison reads every order of the activity: over 100,000 it takes seconds, longer
// than the sale's bounds (the route's 3 s, the zRPC client's 2 s), which answered it BUSY
// however often the merchant asked. Its route has its own timeout, and the call inherits it.
// Here the sale's bounds are far shorter than any comparison (50 ms and 1 ms).
func TestReconcileOutlastsTheSaleTimeouts(t *testing.T) {
	e := start(t)
	a := e.warm(map[string]any{"stock": 20})
	tok := buyerToken(t, 9001)
	var res struct {
		OrderNo string `json:"order_no"`
	}
	e.call(http.MethodPost, "/v1/seckill/orders", tok, reserveBody(a.ActivityID, "reconcile-1", 1), &res)

	short := e.gateway(func(c *apiserver.Config) { c.Timeout, c.Inventory.Timeout = 50, 1 })
	var r struct {
		ActivityID int64  `json:"activity_id"`
		Status     string `json:"status"`
		books
	}
	short.call(http.MethodGet, fmt.Sprintf("/v1/admin/activities/%d/reconcile", a.ActivityID),
		merchantToken(t, merchantID), nil, &r)
	if r.ActivityID != a.ActivityID || r.Status == "" || r.Redis == nil || r.Redis.Locked != 1 {
		t.Fatalf("reconcile %+v", r)
	}

	// The long route did not lengthen how long a request may take to arrive: go-zero sets
	// the read bound from the longest route; the gateway keeps it at 4/5 of the sale's.
	conn, err := net.Dial("tcp", short.base[len("http://"):])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n")); err != nil { // never finished
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	sent := time.Now()
	_, err = bufio.NewReader(conn).ReadByte()
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("a request left unfinished was still open after %s (the read bound is the long route's)",
			time.Since(sent).Round(time.Millisecond))
	}
}
