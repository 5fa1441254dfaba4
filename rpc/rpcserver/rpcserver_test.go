package rpcserver_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/zrpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seckill/seckill/devkit/rpctest"
	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/inventory"
)

var ctx = context.Background()

type fixture struct {
	env    *stocktest.Env
	db     *testenv.Database
	client inventory.InventoryClient
}

func start(t *testing.T) *fixture {
	t.Helper()
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	c := rpctest.Config(t, env.Keys, db.DSN)
	// A thousand calls at once on two loaded cores under -race can outlast go-zero's 2 s:
	// these tests are about answers, not latency (a deadline here is BUSY, not a breaker).
	c.Timeout = 15000
	rpctest.Start(t, c)
	cli, err := zrpc.NewClient(zrpc.RpcClientConf{Endpoints: []string{c.ListenOn}, NonBlock: true, Timeout: 20000})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{env: env, db: db, client: inventory.NewInventoryClient(cli.Conn())}
}

func (f *fixture) insert(t *testing.T, qty int64, start, end time.Time) int64 {
	t.Helper()
	res, err := f.db.DB.Exec(
		"INSERT INTO activity (sku_id, name, total, start_time, end_time, per_user_limit, pay_timeout_seconds) VALUES (3, "+
			"'tea', ?, ?, ?, 1, 900)",
		qty,
		start.Unix(),
		end.Unix(),
	)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.LastInsertId()
	if _, err := f.db.DB.Exec("INSERT INTO inventory (activity_id, available) VALUES (?, ?)", id, qty); err != nil {
		t.Fatal(err)
	}
	return id
}

func codeOf(err error) (codes.Code, xerr.Code) {
	if err == nil {
		return codes.OK, ""
	}
	return status.Code(err), xerr.FromStatus(err).Code
}

func TestSoldOutBurstKeepsTheBreakerClosed(t *testing.T) {
	f := start(t)
	id := f.insert(t, 10, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	if _, err := f.client.Warmup(ctx, &inventory.WarmupReq{ActivityId: id}); err != nil {
		t.Fatal(err)
	}
	var ok, soldOut atomic.Int64
	var mu sync.Mutex
	other := map[string]int{}
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := 0; i < 1000; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-gate
			_, err := f.client.Reserve(ctx, &inventory.ReserveReq{ActivityId: id, Uid: int64(i + 1),
				Quantity: 1, RequestId: fmt.Sprintf("burst-%06d", i)})
			switch gc, c := codeOf(err); {
			case err == nil:
				ok.Add(1)
			case gc == codes.FailedPrecondition && c == xerr.SoldOut:
				soldOut.Add(1)
			default:
				mu.Lock()
				other[fmt.Sprintf("%s/%s", gc, c)]++
				mu.Unlock()
			}
		}(i)
	}
	close(gate)
	wg.Wait()
	if ok.Load() != 10 || soldOut.Load() != 990 || len(other) != 0 {
		t.Fatalf("ok %d, sold out %d, other %v; want 10/990 and nothing else (an open breaker shows as Unavailable)",
			ok.Load(), soldOut.Load(), other)
	}
	if _, err := f.client.GetStock(ctx, &inventory.GetStockReq{ActivityId: id}); err != nil {
		t.Fatalf("after the burst: %v", err)
	}
	f.env.CheckInvariant(id)
}

func TestReserveBackfillsAColdActivity(t *testing.T) {
	f := start(t)
	id := f.insert(t, 3, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	r, err := f.client.Reserve(
		ctx,
		&inventory.ReserveReq{ActivityId: id, Uid: 1, Quantity: 1, RequestId: "cold-000001"},
	)
	if err != nil || r.Remaining != 2 || r.ExpireAt < time.Now().Unix()+800 {
		t.Fatalf("reserve on cold activity: %+v %v", r, err)
	}
	o, err := f.client.GetOrder(ctx, &inventory.OrderReq{OrderNo: r.OrderNo, Uid: 1})
	if err != nil || o.Order.Status != "reserved" || o.Order.Quantity != 1 || o.Order.ActivityId != id {
		t.Fatalf("order: %+v %v", o, err)
	}
	_, err = f.client.GetOrder(ctx, &inventory.OrderReq{OrderNo: r.OrderNo, Uid: 2})
	if status.Code(err) != codes.NotFound {
		t.Fatalf("another user's order: %v", err)
	}
	st, err := f.client.GetStock(ctx, &inventory.GetStockReq{ActivityId: id})
	if err != nil || st.Status != "active" || st.Stock.Remaining != 2 || st.Activity.Name != "tea" {
		t.Fatalf("stock: %+v %v", st, err)
	}
	f.env.CheckInvariant(id)
}

func TestOrderReadFallsBackToMySQL(t *testing.T) {
	f := start(t)
	no := domain.NewOrderNo(77) // tagged like the service's (no OrderKey in tests)
	// the order's activity, ended long ago (an order's amount is its quantity x the price)
	if _, err := f.db.DB.Exec("INSERT INTO activity (id, sku_id, name, total, start_time, end_time, price) " +
		"VALUES (77, 1, 'old', 10, 1699999000, 1700000500, 250)"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.DB.Exec("INSERT INTO seckill_order (order_no, request_id, activity_id, uid, quantity, status, "+
		"expire_at, placed_at) VALUES (?, 'req-old-0001', 77, 5, 2, 'paid', 1700000900, 1700000000)", no); err != nil {
		t.Fatal(err)
	}
	o, err := f.client.GetOrder(ctx, &inventory.OrderReq{OrderNo: no, Uid: 5})
	if err != nil || o.Order.Status != "paid" || o.Order.CreatedAt != 1700000000 || o.Order.ExpireAt != 1700000900 ||
		o.Order.Amount != 500 {
		t.Fatalf("order from MySQL: %+v %v", o, err)
	}
	if _, err := f.client.GetOrder(ctx, &inventory.OrderReq{OrderNo: no, Uid: 6}); status.Code(err) != codes.NotFound {
		t.Fatalf("another user's order: %v", err)
	}
}

func TestBadInputToEveryRPC(t *testing.T) {
	f := start(t)
	id := f.insert(t, 5, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	r, err := f.client.Reserve(
		ctx,
		&inventory.ReserveReq{ActivityId: id, Uid: 1, Quantity: 1, RequestId: "good-000001"},
	)
	if err != nil {
		t.Fatal(err)
	}
	unknownOrder := fmt.Sprintf("%d-1700000000000deadbeef", id)
	cases := append(badReserveCalls(f, id), badOrderCalls(f, id, r.OrderNo, unknownOrder)...)
	for _, tc := range append(cases, badReadCalls(f, unknownOrder)...) {
		t.Run(tc.name, func(t *testing.T) {
			// The "missing" cache mark of the unknown activity is the one write a rejected call
			// may leave: cleared before each snapshot (its short TTL may lapse meanwhile).
			unmark := func() {
				if err := f.env.Store.SetMissing(ctx, 999999, 0); err != nil {
					t.Fatal(err)
				}
			}
			unmark()
			before := f.env.Dump()
			err := tc.call()
			if gc, c := codeOf(err); gc != tc.code || c != tc.word {
				t.Fatalf("got %s/%s (%v), want %s/%s", gc, c, err, tc.code, tc.word)
			}
			unmark()
			after := f.env.Dump()
			for k := range after {
				if _, ok := before[k]; !ok {
					t.Fatalf("key %s appeared", k)
				}
			}
			for k, v := range before {
				if after[k] != v {
					t.Fatalf("key %s changed:\n%s\n%s", k, v, after[k])
				}
			}
		})
	}
	f.env.CheckInvariant(id)
}

// rpcCase is a call TestBadInputToEveryRPC makes and the codes it must get.
type rpcCase struct {
	name string
	call func() error
	code codes.Code
	word xerr.Code
}

// badReserveCalls: Warmup and Reserve of activity id.
func badReserveCalls(f *fixture, id int64) []rpcCase {
	return []rpcCase{
		{
			"warmup id 0",
			func() error { _, err := f.client.Warmup(ctx, &inventory.WarmupReq{}); return err },
			codes.InvalidArgument,
			xerr.InvalidArgument,
		},
		{
			"warmup unknown",
			func() error { _, err := f.client.Warmup(ctx, &inventory.WarmupReq{ActivityId: 999999}); return err },
			codes.NotFound,
			xerr.ActivityNotFound,
		},
		{"reserve qty 0", func() error {
			_, err := f.client.Reserve(
				ctx,
				&inventory.ReserveReq{ActivityId: id, Uid: 2, Quantity: 0, RequestId: "good-000002"},
			)
			return err
		}, codes.InvalidArgument, xerr.InvalidArgument},
		{"reserve qty -3", func() error {
			_, err := f.client.Reserve(
				ctx,
				&inventory.ReserveReq{ActivityId: id, Uid: 2, Quantity: -3, RequestId: "good-000002"},
			)
			return err
		}, codes.InvalidArgument, xerr.InvalidArgument},
		{"reserve huge qty", func() error {
			_, err := f.client.Reserve(
				ctx,
				&inventory.ReserveReq{ActivityId: id, Uid: 2, Quantity: 1 << 60, RequestId: "good-000002"},
			)
			return err
		}, codes.InvalidArgument, xerr.InvalidArgument},
		{"reserve empty request id", func() error {
			_, err := f.client.Reserve(ctx, &inventory.ReserveReq{ActivityId: id, Uid: 2, Quantity: 1})
			return err
		}, codes.InvalidArgument, xerr.InvalidArgument},
		{"reserve oversized request id", func() error {
			_, err := f.client.Reserve(
				ctx,
				&inventory.ReserveReq{ActivityId: id, Uid: 2, Quantity: 1, RequestId: string(make([]byte, 100))},
			)
			return err
		}, codes.InvalidArgument, xerr.InvalidArgument},
		{"reserve no user", func() error {
			_, err := f.client.Reserve(
				ctx,
				&inventory.ReserveReq{ActivityId: id, Quantity: 1, RequestId: "good-000002"},
			)
			return err
		}, codes.InvalidArgument, xerr.InvalidArgument},
		{"reserve unknown activity", func() error {
			_, err := f.client.Reserve(
				ctx,
				&inventory.ReserveReq{ActivityId: 999999, Uid: 2, Quantity: 1, RequestId: "good-000002"},
			)
			return err
		}, codes.NotFound, xerr.ActivityNotFound},
	}
}

// badOrderCalls: Confirm, Release, ExpireDue and Adjust (order no is of activity id).
func badOrderCalls(f *fixture, id int64, no, unknownOrder string) []rpcCase {
	return []rpcCase{
		{
			"confirm malformed",
			func() error { _, err := f.client.Confirm(ctx, &inventory.OrderReq{OrderNo: "x", Uid: 1}); return err },
			codes.InvalidArgument,
			xerr.InvalidArgument,
		},
		{"confirm unknown", func() error {
			_, err := f.client.Confirm(ctx, &inventory.OrderReq{OrderNo: unknownOrder, Uid: 1})
			return err
		}, codes.NotFound, xerr.OrderNotFound},
		{"confirm other user's", func() error {
			_, err := f.client.Confirm(ctx, &inventory.OrderReq{OrderNo: no, Uid: 2})
			return err
		}, codes.NotFound, xerr.OrderNotFound},
		{"release unknown", func() error {
			_, err := f.client.Release(ctx, &inventory.OrderReq{OrderNo: unknownOrder, Uid: 1})
			return err
		}, codes.NotFound, xerr.OrderNotFound},
		{"release negative uid", func() error {
			_, err := f.client.Release(ctx, &inventory.OrderReq{OrderNo: no, Uid: -1})
			return err
		}, codes.InvalidArgument, xerr.InvalidArgument},
		{"expire_due limit too big", func() error {
			_, err := f.client.ExpireDue(ctx, &inventory.ExpireDueReq{ActivityId: id, Limit: 100000})
			return err
		}, codes.InvalidArgument, xerr.InvalidArgument},
		{
			"expire_due id 0",
			func() error { _, err := f.client.ExpireDue(ctx, &inventory.ExpireDueReq{}); return err },
			codes.InvalidArgument,
			xerr.InvalidArgument,
		},
		{
			"adjust zero",
			func() error { _, err := f.client.Adjust(ctx, &inventory.AdjustReq{ActivityId: id}); return err },
			codes.InvalidArgument,
			xerr.InvalidArgument,
		},
		{"adjust below zero", func() error {
			_, err := f.client.Adjust(ctx, &inventory.AdjustReq{ActivityId: id, Delta: -100})
			return err
		}, codes.FailedPrecondition, xerr.InsufficientStock},
	}
}

// badReadCalls: GetStock, Books, Reconcile, Repair and GetOrder.
func badReadCalls(f *fixture, unknownOrder string) []rpcCase {
	return []rpcCase{
		{
			"get stock id 0",
			func() error { _, err := f.client.GetStock(ctx, &inventory.GetStockReq{}); return err },
			codes.InvalidArgument,
			xerr.InvalidArgument,
		},
		{
			"get stock unknown",
			func() error { _, err := f.client.GetStock(ctx, &inventory.GetStockReq{ActivityId: 999999}); return err },
			codes.NotFound,
			xerr.ActivityNotFound,
		},
		{
			"books id 0",
			func() error { _, err := f.client.Books(ctx, &inventory.ReconcileReq{}); return err },
			codes.InvalidArgument,
			xerr.InvalidArgument,
		},
		{
			"books unknown",
			func() error { _, err := f.client.Books(ctx, &inventory.ReconcileReq{ActivityId: 999999}); return err },
			codes.NotFound,
			xerr.ActivityNotFound,
		},
		{
			"reconcile id 0",
			func() error { _, err := f.client.Reconcile(ctx, &inventory.ReconcileReq{}); return err },
			codes.InvalidArgument,
			xerr.InvalidArgument,
		},
		{"reconcile unknown", func() error {
			_, err := f.client.Reconcile(ctx, &inventory.ReconcileReq{ActivityId: 999999})
			return err
		}, codes.NotFound, xerr.ActivityNotFound},
		{
			"repair id 0",
			func() error { _, err := f.client.Repair(ctx, &inventory.ReconcileReq{}); return err },
			codes.InvalidArgument,
			xerr.InvalidArgument,
		},
		{"get order malformed", func() error {
			_, err := f.client.GetOrder(ctx, &inventory.OrderReq{OrderNo: "1-zz", Uid: 1})
			return err
		}, codes.InvalidArgument, xerr.InvalidArgument},
		{"get order unknown", func() error {
			_, err := f.client.GetOrder(ctx, &inventory.OrderReq{OrderNo: unknownOrder, Uid: 1})
			return err
		}, codes.NotFound, xerr.OrderNotFound},
	}
}

// Reconcile and Repair get Reconcile.Timeout instead of the server's Timeout, which is for
// the sale's calls: a run slower than the server's Timeout (slowed here by ReadDuty's
// pauses) still answers, and one that MethodTimeouts names keeps the configured timeout.
func TestReconcileOutlivesTheServerTimeout(t *testing.T) {
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	aid := env.Warm(stocktest.Spec{Total: 2000, Limit: 1, PayTimeout: 900})
	for uid := int64(1); uid <= 1200; uid++ { // ZSCAN COUNT 500: three chunks, two pauses
		if _, err := stocktest.Reserve(ctx, env.Store, aid, uid, 1, fmt.Sprintf("slow-req-%d", uid)); err != nil {
			t.Fatal(err)
		}
	}
	serve := func(named bool) inventory.InventoryClient {
		c := rpctest.Config(t, env.Keys, db.DSN)
		c.Timeout = 100                   // ms
		c.Reconcile.ReadDuty = 0.005      // pause 199x each chunk's read (at 0.02 a ~100 ms run sometimes ended in time)
		c.Reconcile.Timeout = time.Minute // shipped: 1 m
		if named {
			c.MethodTimeouts = []zrpc.MethodTimeoutConf{
				{FullMethod: inventory.Inventory_Reconcile_FullMethodName, Timeout: 100 * time.Millisecond}}
		}
		rpctest.Start(t, c)
		cli, err := zrpc.NewClient(zrpc.RpcClientConf{Endpoints: []string{c.ListenOn}, NonBlock: true, Timeout: 60000})
		if err != nil {
			t.Fatal(err)
		}
		return inventory.NewInventoryClient(cli.Conn())
	}
	t0 := time.Now()
	res, err := serve(false).Reconcile(ctx, &inventory.ReconcileReq{ActivityId: aid})
	if err != nil {
		t.Fatalf("Reconcile past the server's Timeout: %v", err)
	}
	t.Logf("one run: %v, %s", time.Since(t0), res.Status)
	_, err = serve(true).Reconcile(ctx, &inventory.ReconcileReq{ActivityId: aid})
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("Reconcile named in MethodTimeouts (100 ms): %v, want DeadlineExceeded", err)
	}
}
