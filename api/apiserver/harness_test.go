package apiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/conf"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/devkit/rpctest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/authtoken"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/rpc/inventoryclient"
	"github.com/seckill/seckill/rpc/rpcserver"
)

const (
	buyerSecret    = "test-buyer-9f3c1a7e5b2d4c8f0a6e1b3d5c7f9a2e"
	merchantSecret = "test-merchant-4e8b2f6a0c1d3e5f7a9b8c6d4e2f0a1b"
	merchantID     = 7
)

// env is one gateway + inventory rpc on loopback, over a fresh Redis prefix and database.
type env struct {
	t       testing.TB
	base    string
	rpcHost string
	rds     *redis.Redis
	keys    stock.Keys
	db      *testenv.Database
	rpc     *rpcserver.Server
	inv     inventoryclient.Inventory // the inventory service, called directly
	api     *apiserver.Server
	client  *http.Client
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// apiConfig is the gateway on a free loopback port, calling rpcAddr, in Mode test (no load
// shedding: the benchmark profile); it has no database.
func apiConfig(t testing.TB, keys stock.Keys, rpcAddr string) apiserver.Config {
	var c apiserver.Config
	if err := conf.FillDefault(&c); err != nil {
		t.Fatal(err)
	}
	c.Name = "seckill-api.test"
	c.Host = "127.0.0.1"
	c.Port = freePort(t)
	c.Mode = "test"
	c.Log.Level = "severe"
	c.Log.Stat = false
	c.DevServer.Enabled = false
	// Telemetry off: no trace agent, and none of go-zero's trace middleware even once a
	// test of the process started one (testenv.RecordSpans); startTraced turns it on.
	c.Telemetry.Disabled = true
	c.MaxBytes = 64 << 10
	c.CpuThreshold = 0
	c.BuyerAuth.AccessSecret = buyerSecret
	c.MerchantAuth.AccessSecret = merchantSecret
	c.Inventory.Endpoints = []string{rpcAddr}
	// A thousand requests released at once on 2 loaded cores (-race, other test binaries
	// starting their servers) can outlast go-zero's 2 s defaults, and a timeout is BUSY,
	// which the correctness tests do not expect: the tests allow 10 s end to end.
	c.Inventory.Timeout = 10000
	c.Timeout = 15000
	c.Redis = testenv.RedisConf()
	c.KeyPrefix = keys.Prefix
	c.RateLimit.Enabled = false
	c.AddrLimit.Enabled = false     // every test client is 127.0.0.1
	c.MerchantLimit.Enabled = false // every test is merchant 7
	return c
}

// start brings up rpc and gateway; tweak adjusts the gateway config.
func start(t testing.TB, tweak ...func(*apiserver.Config)) *env {
	t.Helper()
	return startWith(t, nil, tweak...)
}

// startWith is start with rpcTweak (nil: none) adjusting the inventory service's config.
func startWith(t testing.TB, rpcTweak func(*rpcserver.Config), tweak ...func(*apiserver.Config)) *env {
	t.Helper()
	rds, keys := testenv.Redis(t)
	db := testenv.MySQL(t)
	rc := rpctest.Config(t, keys, db.DSN)
	rc.Stock.BackfillWaitMs = 100
	rc.Timeout = 10000 // see apiConfig
	rc.Telemetry.Disabled = true
	if rpcTweak != nil {
		rpcTweak(&rc)
	}
	inv, rs := rpctest.Start(t, rc)
	ac := apiConfig(t, keys, rc.ListenOn)
	for _, f := range tweak {
		f(&ac)
	}
	as, err := apiserver.New(ac)
	if err != nil {
		t.Fatalf("api: %v", err)
	}
	go as.Start()
	t.Cleanup(as.Stop)
	e := &env{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", ac.Port), rpcHost: rc.ListenOn, rds: rds, keys: keys, db: db,
		rpc: rs, inv: inv, api: as, client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			MaxIdleConnsPerHost: 1024, MaxConnsPerHost: 0}}}
	e.waitHealthy()
	return e
}

// gateway starts another gateway on the same inventory service (and Redis prefix) and
// returns an env that talks to it.
func (e *env) gateway(tweak ...func(*apiserver.Config)) *env {
	e.t.Helper()
	ac := apiConfig(e.t, e.keys, e.rpcHost)
	for _, f := range tweak {
		f(&ac)
	}
	as, err := apiserver.New(ac)
	if err != nil {
		e.t.Fatalf("api: %v", err)
	}
	go as.Start()
	e.t.Cleanup(as.Stop)
	g := *e
	g.base, g.api = fmt.Sprintf("http://127.0.0.1:%d", ac.Port), as
	g.waitHealthy()
	return &g
}

func (e *env) waitHealthy() {
	e.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if code, _ := e.do(http.MethodGet, "/healthz", "", nil); code == http.StatusOK {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.t.Fatal("gateway did not become healthy")
}

func buyerToken(t testing.TB, uid int64) string {
	t.Helper()
	tok, err := authtoken.Buyer(buyerSecret, uid, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func merchantToken(t testing.TB, mid int64) string {
	t.Helper()
	tok, err := authtoken.Merchant(merchantSecret, mid, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// do sends one request. body: nil, a string/[]byte sent as is, or a value sent as JSON.
// It returns the status and the body; a transport error is (0, error text).
func (e *env) do(method, path, token string, body any) (int, []byte) {
	code, out, _ := e.doWithHeaders(method, path, token, body)
	return code, out
}

// doWithHeaders is do, with the response's headers (nil on a transport error).
func (e *env) doWithHeaders(method, path, token string, body any) (int, []byte, http.Header) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewReader([]byte(b))
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, e.base+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return 0, []byte(err.Error()), nil
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out, resp.Header
}

// call sends a request and decodes a 2xx body into out (when not nil); on any other
// status it fails the test.
func (e *env) call(method, path, token string, body, out any) {
	e.t.Helper()
	code, raw := e.do(method, path, token, body)
	if code != http.StatusOK {
		e.t.Fatalf("%s %s: %d %s", method, path, code, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			e.t.Fatalf("%s %s: decode %q: %v", method, path, raw, err)
		}
	}
}

type errBody struct {
	Code string `json:"code"`
	Msg  string `json:"msg"`
}

// expectErr asserts status and code word of an error response.
func (e *env) expectErr(method, path, token string, body any, status int, code string) {
	e.t.Helper()
	got, raw := e.do(method, path, token, body)
	var eb errBody
	_ = json.Unmarshal(raw, &eb)
	if got != status || eb.Code != code || eb.Msg == "" {
		e.t.Errorf("%s %s: got %d %s, want %d {code:%s, msg:...}", method, path, got, raw, status, code)
	}
}

type activity struct {
	ActivityID        int64  `json:"activity_id"`
	SkuID             int64  `json:"sku_id"`
	Name              string `json:"name"`
	Stock             int64  `json:"stock"`
	StartTime         int64  `json:"start_time"`
	EndTime           int64  `json:"end_time"`
	PerUserLimit      int64  `json:"per_user_limit"`
	PayTimeoutSeconds int64  `json:"pay_timeout_seconds"`
}

// create makes an activity through the API as merchantID; fields override the defaults
// (live now, for an hour, stock 10, limit 1).
func (e *env) create(fields map[string]any) activity {
	e.t.Helper()
	now := time.Now().Unix()
	body := map[string]any{"sku_id": 42, "name": "phone", "stock": 10, "start_time": now - 60,
		"end_time": now + 3600}
	for k, v := range fields {
		body[k] = v
	}
	var a activity
	e.call(http.MethodPost, "/v1/admin/activities", merchantToken(e.t, merchantID), body, &a)
	return a
}

// warm creates and warms an activity, retrying BUSY as docs/API.md tells a client to
// (on a loaded machine the rebuild lock's Redis call may time out).
func (e *env) warm(fields map[string]any) activity {
	e.t.Helper()
	a := e.create(fields)
	path := fmt.Sprintf("/v1/admin/activities/%d/warmup", a.ActivityID)
	for range 10 {
		code, raw := e.do(http.MethodPost, path, merchantToken(e.t, merchantID), nil)
		if code != http.StatusServiceUnavailable {
			if code != http.StatusOK {
				e.t.Fatalf("POST %s: %d %s", path, code, raw)
			}
			return a
		}
		time.Sleep(200 * time.Millisecond)
	}
	e.t.Fatalf("POST %s: BUSY after 10 tries", path)
	return a
}

type books struct {
	Redis *struct{ Remaining, Locked, Sold int64 } `json:"redis"`
	DB    struct{ Available, Locked, Sold int64 }  `json:"db"`
}

// redisStock reads the Redis book straight from Redis (not through the code under test).
func (e *env) redisStock(aid int64) (remaining, locked, sold int64) {
	e.t.Helper()
	vals, err := e.rds.Hmget(e.keys.Stock(aid), "remaining", "locked", "sold")
	if err != nil {
		e.t.Fatal(err)
	}
	n := func(s string) int64 { v, _ := strconv.ParseInt(s, 10, 64); return v }
	return n(vals[0]), n(vals[1]), n(vals[2])
}

// orderCount is how many orders the activity has in Redis.
func (e *env) orderCount(aid int64) int {
	e.t.Helper()
	n, err := e.rds.Hlen(e.keys.OrdersHash(aid))
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func reserveBody(aid int64, reqID string, qty int64) map[string]any {
	return map[string]any{"activity_id": aid, "request_id": reqID, "quantity": qty}
}

type reserved struct {
	OrderNo    string `json:"order_no"`
	ActivityID int64  `json:"activity_id"`
	Quantity   int64  `json:"quantity"`
	Status     string `json:"status"`
	ExpireAt   int64  `json:"expire_at"`
	Remaining  int64  `json:"remaining"`
}

// doHeader is do with a raw Authorization header ("" sends none).
func (e *env) doHeader(method, path, authorization string, body any) (int, []byte) {
	raw, err := json.Marshal(body)
	if err != nil {
		e.t.Fatal(err)
	}
	req, err := http.NewRequest(method, e.base+path, bytes.NewReader(raw))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func decode(raw []byte, v any) error { return json.Unmarshal(raw, v) }

// rpcAddr is the inventory service's address.
func (e *env) rpcAddr() string { return e.rpcHost }
