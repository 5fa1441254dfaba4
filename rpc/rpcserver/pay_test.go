package rpcserver_test

import (
	"testing"
	"time"

	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/inventory"
)

// The provider's payment through Confirm: a uid beside a trade_no is refused, and a replay still
// answers 200 after Redis lost its record of the payment, from the trade_no MySQL keeps.
func TestProviderPaymentReplayedFromMySQL(t *testing.T) {
	f := start(t)
	id := f.insert(t, 10, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	if _, err := f.db.DB.Exec("UPDATE activity SET price = 70, per_user_limit = 2 WHERE id = ?", id); err != nil {
		t.Fatal(err)
	}
	r, err := f.client.Reserve(ctx, &inventory.ReserveReq{ActivityId: id, Uid: 9, Quantity: 2,
		RequestId: "provider-pay-01"})
	if err != nil || r.Amount != 140 {
		t.Fatalf("reserve: %+v %v", r, err)
	}
	pay := &inventory.OrderReq{OrderNo: r.OrderNo, TradeNo: "tr-mysql-1", Amount: 140}
	if _, c := codeOf(f.payWithUID(pay, 9)); c != xerr.InvalidArgument {
		t.Fatalf("a uid beside a trade_no: %s", c)
	}
	res, err := f.client.Confirm(ctx, pay)
	if err != nil || res.Status != "paid" || res.TradeNo != "tr-mysql-1" {
		t.Fatalf("pay: %+v %v", res, err)
	}
	// Redis loses the record (its trades hash); MySQL has the order as the writer wrote it.
	if err := f.env.Raw.Del(ctx, f.env.Keys.Trades(id)).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.DB.Exec("INSERT INTO seckill_order (order_no, request_id, activity_id, uid, quantity, status, "+
		"expire_at, placed_at, trade_no) VALUES (?, 'provider-pay-01', ?, 9, 2, 'paid', 0, 0, 'tr-mysql-1')",
		r.OrderNo, id); err != nil {
		t.Fatal(err)
	}
	if res, err := f.client.Confirm(ctx, pay); err != nil || res.TradeNo != "tr-mysql-1" {
		t.Fatalf("replay after the loss: %+v %v", res, err)
	}
	other := &inventory.OrderReq{OrderNo: r.OrderNo, TradeNo: "tr-mysql-2", Amount: 140}
	if _, c := codeOf(f.payWithUID(other, 0)); c != xerr.OrderPaid {
		t.Fatalf("another trade_no after the loss: %s", c)
	}
}

func (f *fixture) payWithUID(in *inventory.OrderReq, uid int64) error {
	_, err := f.client.Confirm(ctx, &inventory.OrderReq{OrderNo: in.OrderNo, Uid: uid, TradeNo: in.TradeNo,
		Amount: in.Amount})
	return err
}
