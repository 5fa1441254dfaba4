package stock_test

import (
	"strings"
	"testing"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
)

// An order packed in Go reads back as it was, entry ids absent or not; a value that is not a
// packed order is refused.
func TestPackedOrderRoundTrip(t *testing.T) {
	o := stock.Order{OrderNo: "7-1", ActivityID: 7, UID: 42, Quantity: 3, State: domain.StatePaid,
		ExpireAt: 1763000900000, CreatedAt: 1763000000000, RequestID: "req_A-0000001"}
	for _, ids := range [][2]string{{"", ""}, {"1763000000000-0", ""}, {"1763000000000-0", "1763000000500-3"}} {
		v := stock.PackOrder(o, 11, 12, ids[0], ids[1])
		got, cseq, useq, er, es, ok := stock.UnpackOrder(7, "7-1", v)
		if !ok || got != o || cseq != 11 || useq != 12 || er != ids[0] || es != ids[1] {
			t.Fatalf("%q read back as %+v %d %d %q %q %v", v, got, cseq, useq, er, es, ok)
		}
	}
	good := stock.PackOrder(o, 1, 1, "", "")
	for _, bad := range []string{"", "paid", strings.Replace(good, " 42 ", " x ", 1), good + " more",
		strings.TrimSuffix(good, " -"), strings.Replace(good, "paid", "", 1)} {
		if _, _, _, _, _, ok := stock.UnpackOrder(7, "7-1", bad); ok {
			t.Fatalf("%q read as a packed order", bad)
		}
	}
}

// The scripts and Go share one format: an order Go packed (as a restore from MySQL writes it)
// is replayed, paid and read back by the scripts, and what they write back reads in Go.
func TestScriptsReadGoPackedOrders(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 10, Limit: 5})
	r, err := stocktest.Reserve(ctx, e.Store, aid, 1, 2, reqID(1))
	if err != nil {
		t.Fatal(err)
	}
	o, err := e.Store.Order(ctx, r.OrderNo) // the Lua-packed order, read in Go
	if err != nil || o.UID != 1 || o.Quantity != 2 || o.State != domain.StateReserved || o.RequestID != reqID(1) ||
		o.ExpireAt != r.ExpireAt || o.CreatedAt != r.CreatedAt {
		t.Fatalf("order %+v (%v), reserved %+v", o, err, r)
	}
	// Rewrite it as Go packs it, with another expire-at: the scripts must read Go's format.
	o.ExpireAt += 1000
	err = e.Raw.HSet(ctx, e.Keys.OrdersHash(aid), stock.ShortNo(r.OrderNo), stock.PackOrder(o, 0, 0, "", "")).Err()
	if err != nil {
		t.Fatal(err)
	}
	again, err := stocktest.Reserve(ctx, e.Store, aid, 1, 2, reqID(1))
	if err != nil || !again.Replay || again.ExpireAt != o.ExpireAt || again.Quantity != 2 ||
		again.State != domain.StateReserved {
		t.Fatalf("replay of a Go-packed order: %+v, %v; want expire-at %d", again, err, o.ExpireAt)
	}
	if _, err := e.Store.Confirm(ctx, r.OrderNo, 1); err != nil {
		t.Fatal(err)
	}
	paid, err := e.Store.Order(ctx, r.OrderNo)
	if o.State = domain.StatePaid; err != nil || paid != o {
		t.Fatalf("paid order %+v (%v), want %+v", paid, err, o)
	}
	v, err := e.Raw.HGet(ctx, e.Keys.OrdersHash(aid), stock.ShortNo(r.OrderNo)).Result()
	_, _, useq, er, es, ok := stock.UnpackOrder(aid, r.OrderNo, v)
	if err != nil || !ok || useq < 1 || er != "" || es == "" {
		t.Fatalf("paid order packed %q (%v): useq %d, er %q, es %q", v, err, useq, er, es)
	}
}
