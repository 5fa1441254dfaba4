package faults

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// The gateway row's load balancer: a client's connections go to its own gateway while it
// accepts them, and to the next one once it refuses them, each such move counted.
func TestFailoverDialMovesOffARefusingGateway(t *testing.T) {
	var urls []string
	var ls []net.Listener
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		urls = append(urls, "http://"+l.Addr().String())
	}
	defer func() { _ = ls[1].Close() }()
	var moved atomic.Int64
	dial := failoverDial(urls, 0, &moved)
	c, err := dial(context.Background(), "tcp", "ignored:1")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.RemoteAddr().String(); got != ls[0].Addr().String() || moved.Load() != 0 {
		t.Fatalf("dialled %s (moved %d), want its own gateway %s", got, moved.Load(), ls[0].Addr())
	}
	_ = c.Close()
	_ = ls[0].Close() // the gateway killed: its port refuses
	c, err = dial(context.Background(), "tcp", "ignored:1")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := c.RemoteAddr().String(); got != ls[1].Addr().String() || moved.Load() != 1 {
		t.Fatalf("dialled %s (moved %d), want the other gateway %s and one move", got, moved.Load(), ls[1].Addr())
	}
	_ = ls[1].Close()
	if _, err := dial(context.Background(), "tcp", "ignored:1"); err == nil {
		t.Fatal("every gateway refused, yet the dial succeeded")
	}
}

// The partition row's evidence: go-zero's zRPC codes (labelled by number) summed over the
// methods, by name.
func TestRPCCodesSumsByCodeName(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, strings.Join([]string{
			`# TYPE rpc_server_requests_code_total counter`,
			`rpc_server_requests_code_total{code="0",method="/inventory.Inventory/ReserveBatch"} 120`,
			`rpc_server_requests_code_total{code="4",method="/inventory.Inventory/ReserveBatch"} 3`,
			`rpc_server_requests_code_total{code="4",method="/inventory.Inventory/Pay"} 2`,
			`rpc_server_requests_code_total{code="14",method="/inventory.Inventory/Cancel"} 1`,
			`rpc_server_requests_duration_ms_count{method="/inventory.Inventory/Pay"} 9`,
		}, "\n"))
	}))
	defer srv.Close()
	got, err := rpcCodes(context.Background(), strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"OK": 120, "DeadlineExceeded": 5, "Unavailable": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("codes %v, want %v", got, want)
	}
}
