package rpcserver_test

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seckill/seckill/devkit/rpctest"
	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/inventory"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// Each app of etc/inventory.yaml calls only its methods: any other call is
// PermissionDenied and changes nothing. The mq token cannot touch a buyer's order or the
// stock; the api token cannot run the jobs' or the operators' calls.
func TestEachAppCallsOnlyItsMethods(t *testing.T) {
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	_, cli := authed(t, env, db, shippedApps(t))
	aid := env.Warm(stocktest.Spec{Total: 10, Limit: 5, PayTimeout: 900})
	r, err := cli["api"].Reserve(ctx, &inventory.ReserveReq{ActivityId: aid, Uid: 1, Quantity: 1,
		RequestId: "authz-rsv-0001"})
	if err != nil {
		t.Fatal(err)
	}
	order := &inventory.OrderReq{OrderNo: r.OrderNo, Uid: 1}
	calls := map[string]func(inventory.InventoryClient) error{
		"Reserve": func(c inventory.InventoryClient) error {
			_, err := c.Reserve(ctx, &inventory.ReserveReq{ActivityId: aid, Uid: 2, Quantity: 1,
				RequestId: "authz-rsv-0002"})
			return err
		},
		"Confirm": func(c inventory.InventoryClient) error { _, err := c.Confirm(ctx, order); return err },
		"Release": func(c inventory.InventoryClient) error { _, err := c.Release(ctx, order); return err },
		"GetOrder": func(c inventory.InventoryClient) error {
			_, err := c.GetOrder(ctx, order)
			return err
		},
		"Adjust": func(c inventory.InventoryClient) error {
			_, err := c.Adjust(ctx, &inventory.AdjustReq{ActivityId: aid, Delta: 5})
			return err
		},
		"Repair": func(c inventory.InventoryClient) error {
			_, err := c.Repair(ctx, &inventory.ReconcileReq{ActivityId: aid})
			return err
		},
		"ExpireDue": func(c inventory.InventoryClient) error {
			_, err := c.ExpireDue(ctx, &inventory.ExpireDueReq{ActivityId: aid, Limit: 10})
			return err
		},
		"ListActive": func(c inventory.InventoryClient) error {
			_, err := c.ListActive(ctx, &inventory.ActiveReq{})
			return err
		},
		"CreateActivity": func(c inventory.InventoryClient) error {
			_, err := c.CreateActivity(ctx, newActivity(7))
			return err
		},
		"Ping": func(c inventory.InventoryClient) error { _, err := c.Ping(ctx, &inventory.PingReq{}); return err },
	}
	denied := map[string][]string{
		"mq":  {"Reserve", "Confirm", "Release", "GetOrder", "Adjust", "Repair", "CreateActivity", "Ping"},
		"ops": {"Reserve", "Confirm", "Release", "GetOrder", "Adjust", "ExpireDue", "ListActive", "CreateActivity"},
		"api": {"Repair", "ExpireDue", "ListActive"},
	}
	for app, methods := range denied {
		for _, m := range methods {
			if err := calls[m](cli[app]); status.Code(err) != codes.PermissionDenied {
				t.Errorf("%s calls %s: %v, want PermissionDenied", app, m, err)
			}
		}
	}
	for app, methods := range map[string][]string{"mq": {"ListActive", "ExpireDue"}, "api": {"GetOrder", "Ping"}} {
		for _, m := range methods {
			if err := calls[m](cli[app]); err != nil {
				t.Errorf("%s calls %s: %v", app, m, err)
			}
		}
	}
	if s := env.CheckInvariant(aid); s.Total != 10 || s.Locked != 1 || s.Sold != 0 {
		t.Fatalf("refused calls changed the stock: %+v", s)
	}
	if o, err := cli["api"].GetOrder(ctx, order); err != nil || o.Order.Status != "reserved" {
		t.Fatalf("the order: %v %v", o, err)
	}
	var n int
	if err := db.Conn.QueryRow(&n, "SELECT COUNT(*) FROM activity"); err != nil || n != 0 {
		t.Fatalf("a refused CreateActivity wrote %d activities (%v)", n, err)
	}
}

// The merchant RPCs on an activity reach only the merchant's own: another merchant's
// activity is ACTIVITY_NOT_FOUND and unchanged, and the gateway's app cannot leave the
// merchant out; an app with AllActivities (the jobs) calls them for no merchant.
func TestMerchantRPCsReachOnlyTheMerchantsActivities(t *testing.T) {
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	merchantMethods := []string{"Ping", "Warmup", "Adjust", "Books", "Reconcile", "Repair", "CreateActivity", "Orders",
		"ExportOrders"}
	_, cli := authed(t, env, db, []rpcserver.AppToken{
		{App: "gw", Token: freshToken(t), Methods: merchantMethods},
		{App: "job", Token: freshToken(t), Methods: merchantMethods, AllActivities: true}})
	res, err := cli["gw"].CreateActivity(ctx, newActivity(7))
	if err != nil {
		t.Fatal(err)
	}
	aid := res.Activity.ActivityId
	calls := map[string]func(c inventory.InventoryClient, mid int64) error{
		"Warmup": func(c inventory.InventoryClient, mid int64) error {
			_, err := c.Warmup(ctx, &inventory.WarmupReq{ActivityId: aid, MerchantId: mid})
			return err
		},
		"Adjust": func(c inventory.InventoryClient, mid int64) error {
			_, err := c.Adjust(ctx, &inventory.AdjustReq{ActivityId: aid, Delta: 5, MerchantId: mid})
			return err
		},
		"Books": func(c inventory.InventoryClient, mid int64) error {
			_, err := c.Books(ctx, &inventory.ReconcileReq{ActivityId: aid, MerchantId: mid})
			return err
		},
		"Reconcile": func(c inventory.InventoryClient, mid int64) error {
			_, err := c.Reconcile(ctx, &inventory.ReconcileReq{ActivityId: aid, MerchantId: mid})
			return err
		},
		"Repair": func(c inventory.InventoryClient, mid int64) error {
			_, err := c.Repair(ctx, &inventory.ReconcileReq{ActivityId: aid, MerchantId: mid})
			return err
		},
		"Orders": func(c inventory.InventoryClient, mid int64) error {
			_, err := c.Orders(ctx, &inventory.OrdersReq{ActivityId: aid, MerchantId: mid, Size: 10})
			return err
		},
		// A stream's error (its status carrying the code word) comes with its first Recv.
		"ExportOrders": func(c inventory.InventoryClient, mid int64) error {
			s, err := c.ExportOrders(ctx, &inventory.OrdersReq{ActivityId: aid, MerchantId: mid})
			if err == nil {
				_, err = s.Recv()
			}
			return err
		},
	}
	for m, call := range calls {
		if gc, c := codeOf(call(cli["gw"], 8)); gc != codes.NotFound || c != xerr.ActivityNotFound {
			t.Errorf("%s as another merchant: %s/%s, want ACTIVITY_NOT_FOUND", m, gc, c)
		}
		if err := call(cli["gw"], 0); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s for no merchant from the gateway's app: %v, want InvalidArgument", m, err)
		}
	}
	books, err := cli["gw"].Books(ctx, &inventory.ReconcileReq{ActivityId: aid, MerchantId: 7})
	if err != nil || books.Redis != nil || books.Db.Available != 100 {
		t.Fatalf("refused calls changed the activity: %v %v", books, err)
	}
	w, err := cli["gw"].Warmup(ctx, &inventory.WarmupReq{ActivityId: aid, MerchantId: 7})
	if err != nil || !w.Warmed {
		t.Fatalf("the owner warms up: %v %v", w, err)
	}
	a, err := cli["gw"].Adjust(ctx, &inventory.AdjustReq{ActivityId: aid, Delta: 5, MerchantId: 7})
	if err != nil || a.Stock.Total != 105 {
		t.Fatalf("the owner adjusts: %v %v", a, err)
	}
	for _, m := range []string{"Books", "Reconcile"} {
		if err := calls[m](cli["job"], 0); err != nil {
			t.Errorf("%s for no merchant from the jobs' app: %v", m, err)
		}
	}
	if s := env.CheckInvariant(aid); s.Total != 105 || s.Remaining != 105 {
		t.Fatalf("stock: %+v", s)
	}
}

// Apps is the whole list: a service started with an app removed and a token rotated
// refuses the removed app and the old token at once, and with LegacyAppsHash the StockRedis
// hash of app tokens holds exactly the new list.
func TestRemovedAndRotatedTokensRefusedAtStart(t *testing.T) {
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	oldAPI, mq, newAPI := freshToken(t), freshToken(t), freshToken(t)
	authed(t, env, db, []rpcserver.AppToken{{App: "api", Token: oldAPI, Methods: everyMethod},
		{App: "mq", Token: mq, Methods: everyMethod}})
	c := rpctest.Config(t, env.Keys, db.DSN)
	c.Auth, c.Apps = true, []rpcserver.AppToken{{App: "api", Token: newAPI, Methods: everyMethod}}
	c.LegacyAppsHash = true
	_, srv := rpctest.Start(t, c)
	for name, cli := range map[string]inventory.InventoryClient{
		"removed app": dial(t, c.ListenOn, "mq", mq),
		"old token":   dial(t, c.ListenOn, "api", oldAPI),
	} {
		if _, err := cli.Ping(ctx, &inventory.PingReq{}); status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s: %v, want Unauthenticated", name, err)
		}
	}
	if _, err := dial(t, c.ListenOn, "api", newAPI).Ping(ctx, &inventory.PingReq{}); err != nil {
		t.Fatalf("new token: %v", err)
	}
	apps, err := srv.Svc.Redis.HgetallCtx(ctx, rpcserver.AppsKey(env.Keys.Prefix))
	if err != nil || len(apps) != 1 || apps["api"] != newAPI {
		t.Fatalf("the apps hash: %v %v, want only api's new token", apps, err)
	}
}

// A pro service does not start without Auth.
func TestProModeRequiresAuth(t *testing.T) {
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	c := rpctest.Config(t, env.Keys, db.DSN)
	c.Mode, c.OrderKey = "pro", freshToken(t)
	if srv, err := rpcserver.New(c); err == nil || !strings.Contains(err.Error(), "Auth") {
		if srv != nil { // started to be stopped: Stop waits for what Start began
			go srv.Start()
			t.Cleanup(srv.Stop)
		}
		t.Fatalf("pro without Auth: %v", err)
	}
	c.Auth, c.Apps = true, shippedApps(t)
	if err := c.Validate(); err != nil {
		t.Fatalf("pro with Auth: %v", err)
	}
}

// Without LegacyAppsHash no app token is in Redis: the hash an earlier version left (the
// tokens in clear, for go-zero's authenticator) is deleted at start, nothing is written in
// its place, and the service still refuses a wrong token and accepts the right one.
func TestAppTokensNotInRedis(t *testing.T) {
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	api := freshToken(t)
	c := rpctest.Config(t, env.Keys, db.DSN)
	c.Auth, c.Apps = true, []rpcserver.AppToken{{App: "api", Token: api, Methods: everyMethod}}
	if err := env.Redis.HsetCtx(ctx, rpcserver.AppsKey(env.Keys.Prefix), "api", api); err != nil { // an earlier version's
		t.Fatal(err)
	}
	_, srv := rpctest.Start(t, c)
	if n, err := srv.Svc.Redis.ExistsCtx(ctx, rpcserver.AppsKey(env.Keys.Prefix)); err != nil || n {
		t.Fatalf("the apps hash after start: exists %v %v, want none", n, err)
	}
	if _, err := dial(t, c.ListenOn, "api", freshToken(t)).Ping(ctx, &inventory.PingReq{}); status.Code(err) !=
		codes.Unauthenticated {
		t.Errorf("a wrong token: %v, want Unauthenticated", err)
	}
	if _, err := dial(t, c.ListenOn, "api", api).Ping(ctx, &inventory.PingReq{}); err != nil {
		t.Fatalf("the app's token: %v", err)
	}
}
