package stock_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
)

// Restore first deletes, once the stock hash is gone, the activity's orders hash, buyers hash
// (holdings and request ids) and pending zset (wipe.lua); another activity's keys stay. With the
// stock hash present it deletes nothing (ErrAlreadyWarm).
func TestRestoreWipesFirst(t *testing.T) {
	e := stocktest.New(t)
	aid := warmUnchecked(t, e, 2000)
	other := e.Warm(stocktest.Spec{Total: 10, Limit: 1, PayTimeout: 900})
	const n = 600
	for i := 1; i <= n; i++ {
		if _, err := stocktest.Reserve(ctx, e.Store, aid, int64(i), 1, reqID(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := stocktest.Reserve(ctx, e.Store, other, 1, 1, reqID(1)); err != nil {
		t.Fatal(err)
	}
	before := e.Dump()
	exp := time.Now().Add(time.Hour).Unix()
	if err := e.Store.Recovery().Restore(ctx, aid, exp, nil, nil); !errors.Is(err, stock.ErrAlreadyWarm) {
		t.Fatalf("wipe of a warm activity: %v, want ErrAlreadyWarm", err)
	}
	if after := e.Dump(); len(after) != len(before) {
		t.Fatalf("wipe of a warm activity changed %d keys", len(before)-len(after))
	}
	if _, err := e.Redis.Del(e.Keys.Stock(aid)); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.Recovery().Restore(ctx, aid, exp, nil, nil); err != nil {
		t.Fatal(err)
	}
	k := e.Keys
	left := 0
	for key := range e.Dump() {
		if strings.HasPrefix(key, strings.TrimSuffix(k.Stock(aid), "stock")) && key != k.Events(aid) {
			left++
			t.Errorf("left after the wipe: %s", key)
		}
	}
	for _, key := range []string{k.Stock(other), k.OrdersHash(other), k.Buyers(other), k.Pending(other)} {
		if ok, _ := e.Redis.Exists(key); !ok {
			t.Errorf("another activity's %s is gone", key)
		}
	}
	if _, err := e.Store.Order(ctx, mustOrderNo(t, e, other)); err != nil {
		t.Errorf("another activity's order: %v", err)
	}
	if left > 0 {
		t.Fatalf("%d keys of %d orders left", left, n)
	}
}

func TestLost(t *testing.T) {
	e := stocktest.New(t)
	aid := warmUnchecked(t, e, 10)
	st, err := e.Store.Stock(ctx, aid)
	if err != nil {
		t.Fatal(err)
	}
	if gone, err := e.Store.Recovery().Lost(ctx, aid, st.Epoch+1); err != nil || gone {
		t.Fatalf("lost of another epoch: %v %v, want nothing deleted", gone, err)
	}
	if _, err := e.Store.Stock(ctx, aid); err != nil {
		t.Fatalf("stock hash after a refused lost: %v", err)
	}
	if gone, err := e.Store.Recovery().Lost(ctx, aid, st.Epoch); err != nil || !gone {
		t.Fatalf("lost of its epoch: %v %v, want deleted", gone, err)
	}
	if _, err := e.Store.Stock(ctx, aid); !errors.Is(err, stock.ErrNotWarm) {
		t.Fatalf("stock hash after lost: %v, want ErrNotWarm", err)
	}
}

// The restore scripts read each argument by its name: every field of two orders (reserved and
// paid) in the orders hash, the reserved one pending at its expire-at, each request id naming
// its order and each holding in the buyers hash; each entry under its uid in the entries hash;
// each loser's request id lost unless it names an order; every key expiring at the expire-at.
// A bad expire-at writes nothing.
func TestRestoreArgsByName(t *testing.T) {
	e := stocktest.New(t)
	aid := time.Now().UnixNano()%1_000_000_000 + 1
	exp := time.Now().Add(time.Hour).Unix()
	now := time.Now().UnixMilli()
	orders := []domain.Order{{OrderNo: e.Store.NewOrderNo(aid), ActivityID: aid, UID: 21, Quantity: 2,
		State: domain.StateReserved, ExpireAt: now + 1000, CreatedAt: now - 1000, RequestID: reqID(21)},
		{OrderNo: e.Store.NewOrderNo(aid), ActivityID: aid, UID: 22, Quantity: 3, State: domain.StatePaid,
			ExpireAt: now + 2000, CreatedAt: now - 2000, RequestID: reqID(22)}}
	holdings := map[int64]int64{21: 2, 22: 5}
	entries := []domain.DrawEntry{{UID: 21, Qty: 2, RequestID: reqID(21), EventID: "1-1"},
		{UID: 23, Qty: 1, RequestID: reqID(23), EventID: "1-2"}}
	lost := []domain.DrawEntry{entries[1], entries[0]} // entries[0]'s request id names its order
	rec := e.Store.Recovery()
	if err := rec.Restore(ctx, aid, time.Now().Unix()-1, orders, holdings); xerr.CodeOf(err) != xerr.InvalidArgument {
		t.Fatalf("an expire-at past: %v", err)
	}
	// Redis names an order by its short number and makes its number again with this key: one
	// another key tagged, or another activity's, would come back as another number
	for _, no := range []string{domain.NewOrderNo(aid, []byte("another-order-key")), e.Store.NewOrderNo(aid + 1)} {
		bad := append([]domain.Order{orders[0]}, orders[1])
		bad[1].OrderNo = no
		if err := rec.Restore(ctx, aid, exp, bad, holdings); err == nil {
			t.Fatalf("an order numbered %s restored", no)
		}
	}
	if err := rec.RestoreDrawEntries(ctx, aid, 0, entries, lost); xerr.CodeOf(err) != xerr.InvalidArgument {
		t.Fatalf("an expire-at of 0: %v", err)
	}
	if d := e.Dump(); len(d) != 0 {
		t.Fatalf("a refused restore wrote %v", d)
	}
	if err := rec.Restore(ctx, aid, exp, orders, holdings); err != nil {
		t.Fatal(err)
	}
	if err := rec.RestoreDrawEntries(ctx, aid, exp, entries, lost); err != nil {
		t.Fatal(err)
	}
	for _, o := range orders {
		got, cseq, useq, er, es, ok := stock.UnpackOrder(aid, o.OrderNo,
			e.Raw.HGet(ctx, e.Keys.OrdersHash(aid), stock.ShortNo(o.OrderNo)).Val())
		if !ok || got != o || cseq != 0 || useq != 0 || er != "" || es != "" {
			t.Errorf("order %s: %+v (%d %d %q %q), want %+v", o.OrderNo, got, cseq, useq, er, es, o)
		}
		if v := e.Raw.HGet(ctx, e.Keys.Buyers(aid), stock.ReqField(o.UID, o.RequestID)).Val(); v != stock.ShortNo(o.OrderNo) {
			t.Errorf("order %s's request id names %q", o.OrderNo, v)
		}
	}
	if p := e.Raw.ZRangeWithScores(ctx, e.Keys.Pending(aid), 0, -1).Val(); len(p) != 1 ||
		p[0].Member != stock.ShortNo(orders[0].OrderNo) || int64(p[0].Score) != orders[0].ExpireAt {
		t.Errorf("pending %v, want the reserved order at its expire-at", p)
	}
	for uid, q := range holdings {
		if v, _ := e.Raw.HGet(ctx, e.Keys.Buyers(aid), stock.HeldField(uid)).Int64(); v != q {
			t.Errorf("uid %d holds %d, want %d", uid, v, q)
		}
	}
	for _, en := range entries {
		if got, _, _, err := e.Store.DrawEntry(ctx, aid, en.UID); err != nil || got != en {
			t.Errorf("entry of %d: %+v, %v", en.UID, got, err)
		}
	}
	if v := e.Raw.HGet(ctx, e.Keys.Buyers(aid), stock.ReqField(23, reqID(23))).Val(); v != "~lost" {
		t.Errorf("the loser's request id: %q", v)
	}
	for _, k := range []string{e.Keys.OrdersHash(aid), e.Keys.Pending(aid), e.Keys.Buyers(aid), e.Keys.DrawEntries(aid)} {
		if at := e.Raw.ExpireTime(ctx, k).Val(); at != time.Duration(exp)*time.Second {
			t.Errorf("%s expires at %v, want %d", k, at, exp)
		}
	}
}

// A restore batch finds the stock hash present (another rebuild finished): ErrAlreadyWarm and
// nothing written, for each restore script.
func TestRestoreWhileWarmWritesNothing(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 5})
	before := e.Dump()
	exp := time.Now().Add(time.Hour).Unix()
	o := domain.Order{OrderNo: e.Store.NewOrderNo(aid), ActivityID: aid, UID: 1, Quantity: 1,
		State: domain.StatePaid, ExpireAt: 1, CreatedAt: 1, RequestID: reqID(1)}
	en := domain.DrawEntry{UID: 1, Qty: 1, RequestID: reqID(1), EventID: "1-1"}
	rec := e.Store.Recovery()
	for what, err := range map[string]error{
		"orders":   rec.Restore(ctx, aid, exp, []domain.Order{o}, nil),
		"holdings": rec.Restore(ctx, aid, exp, nil, map[int64]int64{1: 1}),
		"entries":  rec.RestoreDrawEntries(ctx, aid, exp, []domain.DrawEntry{en}, nil),
		"losers":   rec.RestoreDrawEntries(ctx, aid, exp, nil, []domain.DrawEntry{en}),
	} {
		if !errors.Is(err, stock.ErrAlreadyWarm) {
			t.Errorf("%s: %v, want ErrAlreadyWarm", what, err)
		}
	}
	if after := e.Dump(); len(after) != len(before) {
		t.Fatalf("a restore under a warm activity wrote: %v -> %v", before, after)
	}
}
