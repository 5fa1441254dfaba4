package rpcserver_test

import (
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/zeromicro/go-zero/zrpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seckill/seckill/devkit/rpctest"
	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/rpc/inventory"
	"github.com/seckill/seckill/rpc/rpcserver"
)

const gatewayToken = "9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e"

// everyMethod lists every RPC of the service.
var everyMethod = []string{"Warmup", "Reserve", "Confirm", "Release", "ExpireDue", "Adjust", "GetStock",
	"GetOrder", "ListActive", "Books", "Reconcile", "Repair", "CreateActivity", "GetActivity",
	"ListActivities", "Ping"}

func dial(t *testing.T, addr, app, token string) inventory.InventoryClient {
	t.Helper()
	cc := zrpc.RpcClientConf{Endpoints: []string{addr}, App: app, Token: token, NonBlock: true, Timeout: 5000}
	cli, err := zrpc.NewClient(cc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Conn().Close() })
	return inventory.NewInventoryClient(cli.Conn())
}

// With Auth on, a call without the credentials of a listed app is refused, whatever the
// method — and refused calls change nothing.
func TestUnauthenticatedCallRefused(t *testing.T) {
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	c := rpctest.Config(t, env.Keys, db.DSN)
	c.Auth, c.Apps = true, []rpcserver.AppToken{{App: "api", Token: gatewayToken, Methods: everyMethod}}
	rpctest.Start(t, c)
	aid := env.Warm(stocktest.Spec{Total: 10})

	good := dial(t, c.ListenOn, "api", gatewayToken)
	r, err := good.Reserve(ctx, &inventory.ReserveReq{ActivityId: aid, Uid: 1, Quantity: 1, RequestId: "auth-rsv-0001"})
	if err != nil {
		t.Fatalf("authenticated call: %v", err)
	}
	for name, cli := range map[string]inventory.InventoryClient{
		"no credentials": dial(t, c.ListenOn, "", ""),
		"wrong token":    dial(t, c.ListenOn, "api", gatewayToken[:len(gatewayToken)-1]+"0"),
		"short token":    dial(t, c.ListenOn, "api", gatewayToken[:8]),
		"unknown app":    dial(t, c.ListenOn, "intruder", gatewayToken),
	} {
		calls := map[string]func() error{
			"Ping": func() error { _, err := cli.Ping(ctx, &inventory.PingReq{}); return err },
			"Confirm": func() error {
				_, err := cli.Confirm(ctx, &inventory.OrderReq{OrderNo: r.OrderNo, Uid: 1})
				return err
			},
			"Adjust": func() error {
				_, err := cli.Adjust(ctx, &inventory.AdjustReq{ActivityId: aid, Delta: 100})
				return err
			},
			"Repair": func() error { _, err := cli.Repair(ctx, &inventory.ReconcileReq{ActivityId: aid}); return err },
			"Reserve": func() error {
				in := &inventory.ReserveReq{ActivityId: aid, Uid: 2, Quantity: 1, RequestId: "auth-rsv-0002"}
				_, err := cli.Reserve(ctx, in)
				return err
			},
		}
		// An unknown app is Unauthenticated too (go-zero's strict authenticator answered
		// Internal: the app's token is not in Redis).
		for method, call := range calls {
			if err := call(); status.Code(err) != codes.Unauthenticated {
				t.Errorf("%s, %s: got %v, want Unauthenticated", name, method, err)
			}
		}
	}
	if s := env.CheckInvariant(aid); s.Total != 10 || s.Remaining != 9 || s.Sold != 0 {
		t.Fatalf("refused calls changed the stock: %+v", s)
	}
	o, err := good.GetOrder(ctx, &inventory.OrderReq{OrderNo: r.OrderNo, Uid: 1})
	if err != nil || o.Order.Status != "reserved" {
		t.Fatalf("the order: %v %v", o, err)
	}
}

// Every RPC a buyer's identity reaches (Reserve, Confirm, Release, GetOrder) touches only
// that buyer's orders: another buyer's order is ORDER_NOT_FOUND and unchanged, and there
// is no uid that means "any owner".
func TestNoBuyerRPCTouchesAnotherBuyersOrder(t *testing.T) {
	f := start(t)
	aid := f.env.Warm(stocktest.Spec{Total: 10, Limit: 5, PayTimeout: 900})
	a, err := f.client.Reserve(ctx, &inventory.ReserveReq{ActivityId: aid, Uid: 1, Quantity: 2,
		RequestId: "owner-a-0001"})
	if err != nil {
		t.Fatal(err)
	}
	for _, uid := range []int64{2, 0, -1} {
		want := codes.NotFound
		if uid < 1 {
			want = codes.InvalidArgument
		}
		req := &inventory.OrderReq{OrderNo: a.OrderNo, Uid: uid}
		if _, err := f.client.Confirm(ctx, req); status.Code(err) != want {
			t.Errorf("Confirm as uid %d: %v, want %s", uid, err, want)
		}
		if _, err := f.client.Release(ctx, req); status.Code(err) != want {
			t.Errorf("Release as uid %d: %v, want %s", uid, err, want)
		}
		if o, err := f.client.GetOrder(ctx, req); status.Code(err) != want {
			t.Errorf("GetOrder as uid %d: %v %v, want %s", uid, o, err, want)
		}
	}
	// The same request id from another buyer is that buyer's own reservation.
	b, err := f.client.Reserve(ctx, &inventory.ReserveReq{ActivityId: aid, Uid: 2, Quantity: 1,
		RequestId: "owner-a-0001"})
	if err != nil || b.OrderNo == a.OrderNo || b.Replay {
		t.Fatalf("another buyer's request id: %+v %v", b, err)
	}
	if s := f.env.CheckInvariant(aid); s.Locked != 3 || s.Sold != 0 {
		t.Fatalf("another buyer changed the order: %+v", s)
	}
	o, err := f.client.GetOrder(ctx, &inventory.OrderReq{OrderNo: a.OrderNo, Uid: 1})
	if err != nil || o.Order.Status != "reserved" || o.Order.Uid != 1 {
		t.Fatalf("owner's read: %v %v", o, err)
	}
	if _, err := f.client.Confirm(ctx, &inventory.OrderReq{OrderNo: a.OrderNo, Uid: 1}); err != nil {
		t.Fatalf("the owner pays: %v", err)
	}
	_, err = f.client.Release(ctx, &inventory.OrderReq{OrderNo: a.OrderNo, Uid: 2})
	if status.Code(err) != codes.NotFound {
		t.Fatalf("another buyer cancels a paid order: %v", err)
	}
}

// shippedApps are the apps etc/inventory.yaml lists, with their methods, each with a fresh token.
func shippedApps(t *testing.T) []rpcserver.AppToken {
	t.Helper()
	c, err := rpcserver.LoadConfig("../../etc/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Apps {
		c.Apps[i].Token = freshToken(t)
	}
	return c.Apps
}

// freshToken is 32 random bytes, hex-encoded.
func freshToken(t *testing.T) string {
	t.Helper()
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// authed starts the service with Auth on and apps, and dials it as each app.
func authed(t *testing.T, env *stocktest.Env, db *testenv.Database,
	apps []rpcserver.AppToken) (rpcserver.Config, map[string]inventory.InventoryClient) {
	t.Helper()
	c := rpctest.Config(t, env.Keys, db.DSN)
	c.Auth, c.Apps = true, apps
	rpctest.Start(t, c)
	clients := map[string]inventory.InventoryClient{}
	for _, a := range apps {
		clients[a.App] = dial(t, c.ListenOn, a.App, a.Token)
	}
	return c, clients
}
