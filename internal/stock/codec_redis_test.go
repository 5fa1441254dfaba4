package stock_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
)

// reserve.lua's reply, decoded by the codec, holds every field under its name: the head with
// the batch's entry id and entry, a reserved item's 0, a refused item's code, a replay of an order made earlier
// in the same call and one of an order made before it, each with its unsent entries, and a
// replay whose order is gone.
func TestReserveReplyFieldsByName(t *testing.T) {
	e := stocktest.New(t, stock.WithEntries())
	aid := e.Warm(stocktest.Spec{Total: 10, Limit: 5})
	a := domain.ReserveItem{UID: 1, Qty: 2, RequestID: reqID(1)}
	nos := []string{e.Store.NewOrderNo(aid), e.Store.NewOrderNo(aid), e.Store.NewOrderNo(aid)}
	head, got, err := e.Store.ReserveReplyFields(ctx, aid, []domain.ReserveItem{a,
		{UID: 2, Qty: 0, RequestID: reqID(2)}, a}, nos)
	if err != nil {
		t.Fatal(err)
	}
	if head["code"] != int64(0) || head["remaining"] != int64(10) || head["created_ms"].(int64) <= 0 ||
		head["expire_at_ms"].(int64) != head["created_ms"].(int64)+900_000 {
		t.Fatalf("head %v", head)
	}
	id, ok := head["entry_id"].(string)
	if entry, isStr := head["entry"].(string); !ok || id == "" || !isStr || entry == "" ||
		got[0]["answer"] != int64(0) {
		t.Fatalf("reserved item: %v, head %v", got[0], head)
	}
	if got[1]["answer"] != int64(-11) {
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
	replayHead, again, err := e.Store.ReserveReplyFields(ctx, aid, []domain.ReserveItem{a}, nos[2:])
	if err != nil {
		t.Fatal(err)
	}
	replay("replay of an order made before", again[0], 8)
	if replayHead["entry_id"] != "" || replayHead["entry"] != int64(0) {
		t.Fatalf("a call that reserved nothing wrote an entry: %v", replayHead)
	}
	order := e.Raw.HGet(ctx, e.Keys.OrdersHash(aid), stock.ShortNo(nos[0])).Val()
	if err := e.Raw.HDel(ctx, e.Keys.OrdersHash(aid), stock.ShortNo(nos[0])).Err(); err != nil {
		t.Fatal(err)
	}
	_, gone, err := e.Store.ReserveReplyFields(ctx, aid, []domain.ReserveItem{a}, nos[2:])
	if err != nil || gone[0]["code"] != int64(1) || gone[0]["order_no"] != nos[0] || gone[0]["state"] != "" {
		t.Fatalf("replay of a gone order: %v, %v", gone, err)
	}
	e.Raw.HSet(ctx, e.Keys.OrdersHash(aid), stock.ShortNo(nos[0]), order) // the invariant check at the end counts it
}

// The other scripts' replies, decoded by name, answer each field: adjust's four counters (all
// different here), warm-up's created and remaining, end's and lost's done, expire_due's count
// and numbers, and an order change's entry, then a repeat's unsent entries.
func TestScriptRepliesByName(t *testing.T) {
	e := stocktest.New(t, stock.WithEntries())
	aid := e.Warm(stocktest.Spec{Total: 10, Limit: 5, PayTimeout: 1, Epoch: 2})
	res, err := e.Store.ReserveBatch(ctx, aid, []domain.ReserveItem{{UID: 1, Qty: 3, RequestID: reqID(1)},
		{UID: 2, Qty: 2, RequestID: reqID(2)}}, time.Time{})
	if err != nil || res[0].Err != nil || res[1].Err != nil {
		t.Fatal(res, err)
	}
	paid, err := e.Store.Confirm(ctx, res[0].OrderNo, 1)
	if err != nil || len(paid) != 1 || paid[0].Epoch != 2 || paid[0].Seq != 2 { // the batch was change 1
		t.Fatalf("pay: entries %+v, %v", paid, err)
	}
	again, err := e.Store.Confirm(ctx, res[0].OrderNo, 1) // nothing deleted them: both unsent
	if err != nil || len(again) != 2 || again[0].ID != stock.EntriesOf(res[0])[0].ID || again[1].ID != paid[0].ID {
		t.Fatalf("pay again: entries %+v, %v", again, err)
	}
	c, es, err := e.Store.Adjust(ctx, aid, 4, "", "")
	if err != nil || c != (domain.Counters{Total: 14, Remaining: 9, Locked: 2, Sold: 3}) || len(es) != 1 {
		t.Fatalf("adjust: %+v, %v, %v", c, es, err)
	}
	m, err := e.Store.Stock(ctx, aid)
	if err != nil {
		t.Fatal(err)
	}
	if created, remaining, err := e.Store.Warmup(ctx, m); err != nil || created || remaining != 9 {
		t.Fatalf("warm-up of a warm activity: %v, %d, %v", created, remaining, err)
	}
	time.Sleep(1100 * time.Millisecond)
	if done, err := e.Store.ExpireDue(ctx, aid, 10); err != nil || len(done) != 1 || done[0] != res[1].OrderNo {
		t.Fatalf("expire due: %v, %v", done, err)
	}
	if moved, err := e.Store.End(ctx, aid, time.Now().Add(time.Minute).Unix()); err != nil || !moved {
		t.Fatalf("end: %v, %v", moved, err)
	}
	if deleted, err := e.Store.Recovery().Lost(ctx, aid, 1); err != nil || deleted {
		t.Fatalf("lost of another epoch: %v, %v", deleted, err)
	}
}

// draw_advance.lua reads each argument by its name: the chunk's cursors, winners and done flag in
// the draw and stock hashes, and every loser of the list (the first and the last too) marked
// lost in the buyers hash.
func TestAdvanceDrawArgsByName(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 10, Limit: 5})
	var lost []domain.DrawEntry
	for i := range 3 {
		lost = append(lost, domain.DrawEntry{UID: int64(i + 1), Qty: 1, RequestID: reqID(i + 1)})
	}
	if err := e.Store.AdvanceDraw(ctx, aid, 0, 7, 4, lost, true); err != nil {
		t.Fatal(err)
	}
	draw := e.Raw.HGetAll(ctx, e.Keys.Draw(aid)).Val()
	if draw["cursor"] != "7" || draw["winners"] != "4" || draw["lost"] != "3" || draw["status"] != "done" {
		t.Fatalf("draw hash %v", draw)
	}
	if drawn := e.Raw.HGet(ctx, e.Keys.Stock(aid), "drawn").Val(); drawn != "1" {
		t.Fatalf("stock hash's drawn %q", drawn)
	}
	for _, l := range lost {
		if v := e.Raw.HGet(ctx, e.Keys.Buyers(aid), stock.ReqField(l.UID, l.RequestID)).Val(); v != "~lost" {
			t.Errorf("loser %d: %q", l.UID, v)
		}
	}
}

// order.lua and stock.packed are one format: for every packed case the string the Lua packer makes
// is the one Go packs, the Lua reader reads Go's string back to the same values, and refuses a value
// with a broken field.
func TestLuaPacksOrdersAsGo(t *testing.T) {
	e := stocktest.New(t)
	src := stock.OrderLua + `
local out = {}
for i = 1, #ARGV, 11 do
  local er, es = ARGV[i + 8], ARGV[i + 9]
  out[#out + 1] = packOrder(ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], ARGV[i + 6],
    ARGV[i + 7], er ~= '' and er, es ~= '' and es)
  local o = unpackOrder(ARGV[i + 10])
  out[#out + 1] = o and table.concat({o.state, o.uid, o.qty, o.expire_at, o.created_at, o.request_id, o.cseq, o.useq,
    o.er or '', o.es or ''}, '|') or 'nil'
end
out[#out + 1] = unpackOrder('r 42 3 jag0 mhwsoi68 req_A-0000001 b 1 0 3:-dw') and 'read' or 'nil'
for _, bad in ipairs({'reserved 42 3 jag0 mhwsoi68 req_A-0000001 b 1 0 -', 'r 42 3 J 1 q 1 1 - -',
    'r 42 3 1 -1 q 1 1 - -', 'r 42 3 1 1 q -1 1 - -', 'r 42 3 1 1 q 1 1 0: -', 'r x 3 1 1 q 1 1 - -'}) do
  out[#out + 1] = unpackOrder(bad) and bad or 'nil'
end
return out`
	var argv []any
	var want []string
	for _, c := range slices.Concat(packedCases(), numberCases(), sharedCases()) {
		i := func(v int64) string { return strconv.FormatInt(v, 10) }
		v := stock.PackOrder(c.o, c.cseq, c.useq, c.er, c.es)
		argv = append(argv, c.o.State, i(c.o.UID), i(c.o.Quantity), i(c.o.ExpireAt), i(c.o.CreatedAt), c.o.RequestID,
			i(c.cseq), i(c.useq), c.er, c.es, v)
		want = append(want, v, strings.Join([]string{c.o.State, i(c.o.UID), i(c.o.Quantity), i(c.o.ExpireAt),
			i(c.o.CreatedAt), c.o.RequestID, i(c.cseq), i(c.useq), c.er, c.es}, "|"))
	}
	want = append(want, "read", "nil", "nil", "nil", "nil", "nil", "nil")
	got, err := e.Raw.Eval(ctx, src, nil, argv...).StringSlice()
	if err != nil || len(got) != len(want) {
		t.Fatalf("order.lua: %q, %v", got, err)
	}
	for k := range want {
		if got[k] != want[k] {
			t.Errorf("order.lua %d: %q, Go %q", k, got[k], want[k])
		}
	}
}
