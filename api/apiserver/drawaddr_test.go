package apiserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// enterFrom posts buyer uid's reservation through g as if from client address addr (the
// gateway trusts 127.0.0.1's X-Real-IP).
func enterFrom(t *testing.T, g *env, addr string, uid, aid int64) int {
	t.Helper()
	raw, _ := json.Marshal(reserveBody(aid, fmt.Sprintf("entry-%06d", uid), 1))
	req, err := http.NewRequest(http.MethodPost, g.base+"/v1/seckill/orders", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+buyerToken(t, uid))
	req.Header.Set("X-Real-IP", addr)
	resp, err := g.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// A draw admits at most Draw.EntriesPerAddress entrants from one client address, counted
// across gateways; an entrant's replay is not counted again, and another address has its own.
func TestDrawEntriesPerAddressAcrossGateways(t *testing.T) {
	addrs := func(c *apiserver.Config) {
		c.AddrLimit.Enabled, c.AddrLimit.ReserveQuota = true, 1000
		c.AddrLimit.ClientIPHeader, c.AddrLimit.TrustedProxies = "X-Real-IP", []string{"127.0.0.1"}
	}
	e := startWith(t, func(c *rpcserver.Config) { c.Draw.EntriesPerAddress = 3 }, addrs)
	g := e.gateway(addrs)
	a := e.warm(map[string]any{"stock": 5, "per_user_limit": 1, "start_time": time.Now().Unix() - 1,
		"draw_seconds": 60})
	gws := []*env{e, g}
	for uid := int64(1); uid <= 5; uid++ {
		want := http.StatusAccepted
		if uid > 3 {
			want = http.StatusTooManyRequests
		}
		if code := enterFrom(t, gws[uid%2], "198.51.100.7", uid, a.ActivityID); code != want {
			t.Fatalf("buyer %d from the crowded address: %d, want %d", uid, code, want)
		}
	}
	if code := enterFrom(t, g, "198.51.100.7", 1, a.ActivityID); code != http.StatusAccepted {
		t.Fatalf("an entrant's replay: %d, want 202", code)
	}
	if code := enterFrom(t, e, "198.51.100.8", 6, a.ActivityID); code != http.StatusAccepted {
		t.Fatalf("a buyer from another address: %d, want 202", code)
	}
	var v drawView
	e.call(http.MethodGet, fmt.Sprintf("/v1/admin/activities/%d", a.ActivityID), merchantToken(t, merchantID), nil, &v)
	if v.Draw == nil || v.Draw.Entries != 4 {
		t.Fatalf("entries %+v, want 4", v.Draw)
	}
}
