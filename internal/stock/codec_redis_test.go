package stock_test

import (
	"testing"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
)

// reserve.lua's reply, decoded by the codec, holds every field under its name: the head, a
// reserved item's entry id and entry, a refused item's code, a replay of an order made earlier
// in the same call and one of an order made before it, each with its unsent entries, and a
// replay whose order is gone.
func TestReserveReplyFieldsByName(t *testing.T) {
	e := stocktest.New(t, stock.WithEntries())
	aid := e.Warm(stocktest.Spec{Total: 10, Limit: 5})
	a := stock.ReserveItem{UID: 1, Qty: 2, RequestID: reqID(1)}
	nos := []string{e.Store.NewOrderNo(aid), e.Store.NewOrderNo(aid), e.Store.NewOrderNo(aid)}
	head, got, err := e.Store.ReserveReplyFields(ctx, aid, []stock.ReserveItem{a,
		{UID: 2, Qty: 0, RequestID: reqID(2)}, a}, nos)
	if err != nil {
		t.Fatal(err)
	}
	if head["code"] != int64(0) || head["remaining"] != int64(10) || head["created_ms"].(int64) <= 0 ||
		head["expire_at_ms"].(int64) != head["created_ms"].(int64)+900_000 {
		t.Fatalf("head %v", head)
	}
	id, ok := got[0]["answer"].(string)
	if entry, isStr := got[0]["entry"].(string); !ok || id == "" || !isStr || entry == "" {
		t.Fatalf("reserved item: %v", got[0])
	}
	if got[1]["answer"] != int64(-11) || got[1]["entry"] != int64(0) {
		t.Fatalf("refused item: %v", got[1])
	}
	replay := func(what string, r map[string]any, remaining int64) {
		t.Helper()
		unsent, _ := r["unsent"].([]any)
		if r["code"] != int64(1) || r["order_no"] != nos[0] || r["state"] != domain.StateReserved ||
			r["qty"] != int64(2) || r["expire_at_ms"] != head["expire_at_ms"] ||
			r["created_ms"] != head["created_ms"] || r["remaining"] != remaining || len(unsent) < 2 || unsent[0] != id {
			t.Fatalf("%s: %v", what, r)
		}
	}
	replay("replay within the call", got[2], 8)
	_, again, err := e.Store.ReserveReplyFields(ctx, aid, []stock.ReserveItem{a}, nos[2:])
	if err != nil {
		t.Fatal(err)
	}
	replay("replay of an order made before", again[0], 8)
	order := e.Raw.HGet(ctx, e.Keys.OrdersHash(aid), nos[0]).Val()
	if err := e.Raw.HDel(ctx, e.Keys.OrdersHash(aid), nos[0]).Err(); err != nil {
		t.Fatal(err)
	}
	_, gone, err := e.Store.ReserveReplyFields(ctx, aid, []stock.ReserveItem{a}, nos[2:])
	if err != nil || gone[0]["code"] != int64(1) || gone[0]["order_no"] != nos[0] || gone[0]["state"] != "" {
		t.Fatalf("replay of a gone order: %v, %v", gone, err)
	}
	e.Raw.HSet(ctx, e.Keys.OrdersHash(aid), nos[0], order) // the invariant check at the end counts it
}
