package rpcserver_test

import (
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

func dial(t *testing.T, addr, app, token string) inventory.InventoryClient {
	t.Helper()
	cli, err := zrpc.NewClient(
		zrpc.RpcClientConf{Endpoints: []string{addr}, App: app, Token: token, NonBlock: true, Timeout: 5000},
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Conn().Close() })
	return inventory.NewInventoryClient(cli.Conn())
}

// With Auth on, a call without the credentials of a listed app is refused, whatever the
// method — and refused calls change nothing.
func TestUnauthenticatedCallRefused(t *testing.T) {
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	c := rpctest.Config(t, env.Keys, db.DSN)
	c.Auth, c.Apps = true, []rpcserver.AppToken{{App: "api", Token: gatewayToken}}
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
				_, err := cli.Reserve(
					ctx,
					&inventory.ReserveReq{ActivityId: aid, Uid: 2, Quantity: 1, RequestId: "auth-rsv-0002"},
				)
				return err
			},
		}
		want := codes.Unauthenticated
		if name == "unknown app" {
			want = codes.Internal // go-zero's strict authenticator: the app's token is not in Redis
		}
		for method, call := range calls {
			if err := call(); status.Code(err) != want {
				t.Errorf("%s, %s: got %v, want %s", name, method, err, want)
			}
		}
	}
	if s := env.CheckInvariant(aid); s.Total != 10 || s.Remaining != 9 || s.Sold != 0 {
		t.Fatalf("refused calls changed the stock: %+v", s)
	}
	if o, err := good.GetOrder(ctx, &inventory.OrderReq{OrderNo: r.OrderNo, Uid: 1}); err != nil ||
		o.Order.Status != "reserved" {
		t.Fatalf("the order: %v %v", o, err)
	}
}

// Every RPC a buyer's identity reaches (Reserve, Confirm, Release, GetOrder) touches only
// that buyer's orders: another buyer's order is ORDER_NOT_FOUND and unchanged, and there
// is no uid that means "any owner".
func TestNoBuyerRPCTouchesAnotherBuyersOrder(t *testing.T) {
	f := start(t)
	aid := f.env.Warm(stocktest.Spec{Total: 10, Limit: 5, PayTimeout: 900})
	a, err := f.client.Reserve(
		ctx,
		&inventory.ReserveReq{ActivityId: aid, Uid: 1, Quantity: 2, RequestId: "owner-a-0001"},
	)
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
	b, err := f.client.Reserve(
		ctx,
		&inventory.ReserveReq{ActivityId: aid, Uid: 2, Quantity: 1, RequestId: "owner-a-0001"},
	)
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
