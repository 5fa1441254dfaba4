package stock_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
)

// packedCase is an order with its seqs and entry ids, as a packed order holds them.
type packedCase struct {
	o          domain.Order
	cseq, useq int64
	er, es     string
}

// packedCases are orders of every state, with entry ids absent, at created_at's ms and not (later
// and earlier), an expire-at before the creation, and seqs equal and not.
func packedCases() []packedCase {
	o := domain.Order{OrderNo: "7-1", ActivityID: 7, UID: 42, Quantity: 3, State: domain.StatePaid,
		ExpireAt: 1763000900000, CreatedAt: 1763000000000, RequestID: "req_A-0000001"}
	restored, early, expired, cancelled := o, o, o, o
	restored.State = domain.StateReserved
	early.ExpireAt = o.CreatedAt - 5
	expired.State, cancelled.State = domain.StateExpired, domain.StateCancelled
	return []packedCase{{restored, 0, 0, "", ""}, {o, 11, 11, "1763000000000-0", ""},
		{o, 11, 12, "1763000000000-0", "1763000000500-3"}, {early, 46655, 46656, "1762999999998-40", ""},
		{expired, 1, 9, "", "1763000900001-0"}, {cancelled, 5, 6, "1763000000000-35", "1763000000000-36"}}
}

// numberCases are orders whose numbers cross every length in base 36 up to 10 digits (0, 35 and 36,
// 1,295 and 1,296, ... 36^10 - 1: odd and even counts of digits, order.lua makes two digits a step;
// within Lua's exact integers), in each of the order's base-36 values, and entry ids at another ms.
func numberCases() []packedCase {
	var cs []packedCase
	const created = int64(1763000000000)
	for p := int64(1); p <= 101559956668416; p *= 36 { // up to 36^9
		for _, x := range []int64{p - 1, p, p + 1, p*36 - 1} {
			o := domain.Order{OrderNo: "7-1", ActivityID: 7, UID: x, Quantity: 1, State: domain.StateReserved,
				ExpireAt: created + x%(p*7+3), CreatedAt: x, RequestID: "r"}
			cs = append(cs, packedCase{o, x, x + p, "", ""})
			o.CreatedAt, o.ExpireAt = created, created-x
			cs = append(cs, packedCase{o, 0, x, strconv.FormatInt(created+x, 10) + "-" + strconv.FormatInt(x, 10),
				strconv.FormatInt(created, 10) + "-" + strconv.FormatInt(x, 10)})
		}
	}
	return cs
}

// sharedCases are orders packed one after another, each the one before with one value changed of
// those order.lua's packOrder keeps from the order before (expire_at, created_at, cseq, useq, er,
// es), then every one back: a value left out of its comparison packs a stale piece.
func sharedCases() []packedCase {
	c := packedCases()[2]
	cs := []packedCase{c}
	for i := range 6 {
		switch i {
		case 0:
			c.o.ExpireAt++
		case 1:
			c.o.CreatedAt--
		case 2:
			c.cseq--
		case 3:
			c.useq++
		case 4:
			c.er = "1763000000001-2"
		case 5:
			c.es = ""
		}
		cs = append(cs, c)
	}
	return append(cs, packedCases()[2])
}

// An order packed in Go reads back as it was (every state, entry ids absent, at its creation's ms
// or not, numbers below their base); the format is the one documented (one value pinned); a value
// with any one field broken, and one of the earlier layout, is refused.
func TestPackedOrderRoundTrip(t *testing.T) {
	for _, c := range append(packedCases(), numberCases()...) {
		v := stock.PackOrder(c.o, c.cseq, c.useq, c.er, c.es)
		got, cseq, useq, er, es, ok := stock.UnpackOrder(7, "7-1", v)
		if !ok || got != c.o || cseq != c.cseq || useq != c.useq || er != c.er || es != c.es {
			t.Fatalf("%q read back as %+v %d %d %q %q %v, want %+v", v, got, cseq, useq, er, es, ok, c)
		}
	}
	c := packedCases()[2]
	want := "p 42 3 jag0 mhwsoi68 req_A-0000001 b 1 0 3:dw"
	if v := stock.PackOrder(c.o, c.cseq, c.useq, c.er, c.es); v != want {
		t.Fatalf("packed %q, want %q", v, want)
	}
	good := "r 42 3 jag0 mhwsoi68 req_A-0000001 b 1 0 3:-dw"
	if _, _, _, _, _, ok := stock.UnpackOrder(7, "7-1", good); !ok {
		t.Fatalf("%q not read as a packed order", good)
	}
	f := strings.Split(good, " ")
	broken := func(i int, v string) string {
		g := append([]string(nil), f...)
		g[i] = v
		return strings.Join(g, " ")
	}
	for _, bad := range []string{"", "r", good + " more", strings.TrimSuffix(good, " 3:-dw"),
		"reserved 42 3 1763000900000 1763000000000 req_A-0000001 11 11 1763000000000-0 -", // the earlier layout
		broken(0, "reserved"), broken(0, ""), broken(1, "x"), broken(1, "-42"), broken(2, "3a"),
		broken(3, "J9cw"), broken(3, "+jag0"), broken(3, "-"), broken(4, "-mhwsoi68"), broken(4, "mhw.oi68"),
		broken(5, ""), broken(6, "-b"), broken(7, "1-"), broken(8, "1763000000000-0"), broken(8, "0:"),
		broken(9, "3:-"), broken(9, "-:dw"), broken(9, "")} {
		if _, _, _, _, _, ok := stock.UnpackOrder(7, "7-1", bad); ok {
			t.Fatalf("%q read as a packed order", bad)
		}
	}
}

// A reserved order as the ten-million-buyer sale makes it (a 12-digit uid, a 17-character request
// id, 900 s to pay, its batch's seq under 36^3 and entry at its creation's ms) packs in at most 60
// bytes: with the sds header (3 B) and its NUL Redis's allocator keeps it in a 64-byte block (112
// in the earlier layout's 99 bytes).
func TestPackedOrderFitsItsSizeClass(t *testing.T) {
	o := domain.Order{OrderNo: "1-1", ActivityID: 1, UID: 764211029999, Quantity: 1, State: domain.StateReserved,
		ExpireAt: 1764920400123 + 900_000, CreatedAt: 1764920400123, RequestID: "lg-0a1b2c3d-29999"}
	v := stock.PackOrder(o, 46655, 46655, "1764920400123-35", "")
	if len(v) > 60 {
		t.Fatalf("%q: %d bytes, want at most 60 (the 64-byte size class)", v, len(v))
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

// A request id's field in the buyers hash names one (uid, request id) and no holding: different
// pairs give different fields, none a heldField; the ten-million-buyer sale's (a 12-digit uid, a
// 17-character request id) takes at most 28 bytes, so with its sds header and NUL a 32-byte block
// (40 with the uid in decimal).
func TestReqFieldIsShortAndExact(t *testing.T) {
	seen := map[string][2]string{}
	for _, uid := range []int64{1, 17, 35, 36, 1296, 764211029999, 1<<63 - 1} {
		for _, rid := range []string{"a", "h", "1", "r1", "lg-0a1b2c3d-29999", "_-_"} {
			f := stock.ReqField(uid, rid)
			if p, dup := seen[f]; dup {
				t.Fatalf("%q is the field of %v and of %d %q", f, p, uid, rid)
			}
			seen[f] = [2]string{strconv.FormatInt(uid, 10), rid}
			for _, held := range []int64{uid, 1, 17} {
				if f == stock.HeldField(held) {
					t.Fatalf("%q is uid %d's request %q and the holding of %d", f, uid, rid, held)
				}
			}
		}
	}
	if f := stock.ReqField(764211029999, "lg-0a1b2c3d-29999"); len(f) > 28 {
		t.Fatalf("%q: %d bytes, want at most 28 (the 32-byte size class)", f, len(f))
	}
}
