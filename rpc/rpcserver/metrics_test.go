package rpcserver_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/rpc/inventory"
)

// TestOutcomeCounters: 30 concurrent buyers on 10 units count 10 OK and 20 SOLD_OUT
// reservations; paying 4 and cancelling 3 count 4 pay OK and 3 cancel OK, and paying a
// cancelled order counts one pay ORDER_CLOSED.
func TestOutcomeCounters(t *testing.T) {
	f := start(t)
	id := f.insert(t, 10, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	if _, err := f.client.Warmup(ctx, &inventory.WarmupReq{ActivityId: id}); err != nil {
		t.Fatal(err)
	}
	res := func(code string) float64 {
		return testenv.Counter(t, "seckill_inventory_reservations_total", map[string]string{"code": code})
	}
	op := func(op, code string) float64 {
		return testenv.Counter(t, "seckill_inventory_order_ops_total", map[string]string{"op": op, "code": code})
	}
	okBefore, soldOutBefore := res("OK"), res("SOLD_OUT")
	payBefore, cancelBefore, closedBefore := op("pay", "OK"), op("cancel", "OK"), op("pay", "ORDER_CLOSED")

	var mu sync.Mutex
	var orders []*inventory.ReserveResp
	var wg sync.WaitGroup
	for uid := int64(1); uid <= 30; uid++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := f.client.Reserve(ctx, &inventory.ReserveReq{ActivityId: id, Uid: uid, Quantity: 1,
				RequestId: fmt.Sprintf("metrics-%d", uid)})
			if err == nil {
				mu.Lock()
				orders = append(orders, r)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(orders) != 10 {
		t.Fatalf("%d reserved, want 10", len(orders))
	}
	if got := res("OK") - okBefore; got != 10 {
		t.Errorf("OK reservations counted %v, want 10", got)
	}
	if got := res("SOLD_OUT") - soldOutBefore; got != 20 {
		t.Errorf("SOLD_OUT reservations counted %v, want 20", got)
	}
	uidOf := func(r *inventory.ReserveResp) int64 { // the reply has no uid: the order has
		o, err := f.env.Store.Order(ctx, r.OrderNo)
		if err != nil {
			t.Fatal(err)
		}
		return o.UID
	}
	for i, r := range orders[:7] {
		req := &inventory.OrderReq{OrderNo: r.OrderNo, Uid: uidOf(r)}
		var err error
		if i < 4 {
			_, err = f.client.Confirm(ctx, req)
		} else {
			_, err = f.client.Release(ctx, req)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.client.Confirm(ctx, &inventory.OrderReq{OrderNo: orders[6].OrderNo,
		Uid: uidOf(orders[6])}); err == nil {
		t.Fatal("paying a cancelled order succeeded")
	}
	p, c := op("pay", "OK")-payBefore, op("cancel", "OK")-cancelBefore
	if cl := op("pay", "ORDER_CLOSED") - closedBefore; p != 4 || c != 3 || cl != 1 {
		t.Errorf("pay OK %v, cancel OK %v, pay ORDER_CLOSED %v; want 4, 3, 1", p, c, cl)
	}
	f.env.CheckInvariant(id)
}

// TestBatchItemsCounted: a ReserveBatch of 5 items on 3 units counts 3 OK and 2 SOLD_OUT
// reservations, item by item.
func TestBatchItemsCounted(t *testing.T) {
	f := start(t)
	id := f.insert(t, 3, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	if _, err := f.client.Warmup(ctx, &inventory.WarmupReq{ActivityId: id}); err != nil {
		t.Fatal(err)
	}
	res := func(code string) float64 {
		return testenv.Counter(t, "seckill_inventory_reservations_total", map[string]string{"code": code})
	}
	okBefore, soldOutBefore := res("OK"), res("SOLD_OUT")
	in := &inventory.ReserveBatchReq{ActivityId: id}
	for uid := int64(1); uid <= 5; uid++ {
		in.Items = append(in.Items, &inventory.ReserveItem{Uid: uid, Quantity: 1,
			RequestId: fmt.Sprintf("batch-metrics-%d", uid)})
	}
	if _, err := f.client.ReserveBatch(ctx, in); err != nil {
		t.Fatal(err)
	}
	if ok, soldOut := res("OK")-okBefore, res("SOLD_OUT")-soldOutBefore; ok != 3 || soldOut != 2 {
		t.Fatalf("counted %v OK and %v SOLD_OUT, want 3 and 2", ok, soldOut)
	}
}
