package draw_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/draw"
)

var ctx = context.Background()

func reqID(uid int64) string { return fmt.Sprintf("entry-%08d", uid) }

// lost is the losers the draw of aid recorded (its hash's field, which AdvanceDraw adds to).
func lost(tb testing.TB, e *stocktest.Env, aid int64) int64 {
	tb.Helper()
	v, err := e.Redis.Hget(e.Keys.Draw(aid), "lost")
	if err != nil && !errors.Is(err, redis.Nil) { // none lost yet
		tb.Fatal(err)
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

// seedOf is a fixed 32-byte draw seed for test n.
func seedOf(n int) []byte {
	s := sha256.Sum256([]byte(fmt.Sprintf("draw test seed %d", n)))
	return s[:]
}

type fixture struct {
	e    *stocktest.Env
	acts model.ActivityModel
}

func newFixture(t *testing.T) *fixture {
	db := testenv.MySQL(t)
	return &fixture{e: stocktest.New(t), acts: model.NewActivityModel(db.Conn)}
}

// activity creates an activity in MySQL (its draw seed fixed to seed) and in Redis, enters
// buyers 1..n (quantity 1 + uid%2, limit 2), and returns once its draw fell due: after the
// window, or at once when entering took longer.
func (f *fixture) activity(t *testing.T, total int64, n int, seed []byte, window time.Duration) int64 {
	t.Helper()
	now := time.Now()
	id, err := f.acts.InsertWithInventory(ctx, &model.Activity{SkuId: 7, Name: "draw", Total: uint64(total),
		StartTime: now.Add(-time.Minute).Unix(), EndTime: now.Add(time.Hour).Unix(), PerUserLimit: 2,
		PayTimeoutSeconds: 900, MerchantId: 1, DrawSeconds: 60, DrawSeed: string(seed)})
	if err != nil {
		t.Fatal(err)
	}
	// The entry window ends when every entrant is in, at now + window or later: an hour ahead
	// while they enter (8,892 entrants outlasted a window of 1 s beside a CPU spinner under
	// -race, 20 of 20 runs: BUSY "the opening draw is being decided"), then draw_at is set.
	f.e.Warm(stocktest.Spec{ID: id, Total: total, Limit: 2, DrawAt: now.Add(time.Hour)})
	for i := 0; i < n; i += stock.MaxReserveBatch {
		var items []domain.ReserveItem
		for u := i + 1; u <= min(i+stock.MaxReserveBatch, n); u++ {
			items = append(items, domain.ReserveItem{UID: int64(u), Qty: 1 + int64(u%2), RequestID: reqID(int64(u))})
		}
		res, err := f.e.Store.ReserveBatch(ctx, id, items, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil || r.State != domain.StateQueued {
				t.Fatalf("entry: %+v", r)
			}
		}
	}
	at := now.Add(window)
	if late := time.Now(); late.After(at) {
		at = late
	}
	if err := f.e.Redis.HsetCtx(ctx, f.e.Keys.Stock(id), "draw_at", fmt.Sprint(at.UnixMilli())); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(at) + 20*time.Millisecond)
	return id
}

// outcome is who won (uid -> order_no), read from Redis' orders, failing on a buyer with two.
func (f *fixture) outcome(t *testing.T, aid int64) map[int64]string {
	t.Helper()
	nos, err := stocktest.OrderNos(ctx, f.e.Store, aid)
	if err != nil {
		t.Fatal(err)
	}
	won := map[int64]string{}
	for _, no := range nos {
		o, err := f.e.Store.Order(ctx, no)
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := won[o.UID]; ok {
			t.Fatalf("entrant %d has two orders: %s and %s", o.UID, prev, no)
		}
		if !strings.HasPrefix(o.RequestID, reqID(o.UID)) {
			t.Fatalf("order %s of uid %d has request id %s, not the entry's", no, o.UID, o.RequestID)
		}
		won[o.UID] = no
	}
	return won
}

func winners(won map[int64]string) []int64 {
	out := make([]int64, 0, len(won))
	for u := range won {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// recomputed is the draw of activity aid as anyone recomputes it from what its audit shows
// (MySQL's seed and draw_stock, the entries), with the standard library alone: the entrants by
// HMAC-SHA256(seed, uid in decimal), each served its quantity against the stock, one that does
// not fit skipped. The winners by uid.
func (f *fixture) recomputed(t *testing.T, aid int64) []int64 {
	t.Helper()
	a, err := f.acts.FindOne(ctx, uint64(aid))
	if err != nil || !a.DrawStock.Valid {
		t.Fatalf("activity %d: %+v, %v", aid, a, err)
	}
	entries, err := f.e.Store.DrawEntries(ctx, aid)
	if err != nil {
		t.Fatal(err)
	}
	key := func(uid int64) string {
		m := hmac.New(sha256.New, []byte(a.DrawSeed))
		m.Write([]byte(strconv.FormatInt(uid, 10)))
		return string(m.Sum(nil))
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i].UID) < key(entries[j].UID) })
	var won []int64
	left := a.DrawStock.Int64
	for _, e := range entries {
		if e.Qty <= left {
			left -= e.Qty
			won = append(won, e.UID)
		}
	}
	sort.Slice(won, func(i, j int) bool { return won[i] < won[j] })
	return won
}

// The draw serves the entrants in the seeded order until the stock is gone: each winner holds a
// reserved order expiring pay_timeout after the draw, replaying the entry answers it, a loser's
// replay is SOLD_OUT, GET entries tells won/lost, and afterwards reservations are first come.
func TestDrawServesSeededOrder(t *testing.T) {
	f := newFixture(t)
	aid := f.activity(t, 10, 40, seedOf(7), 800*time.Millisecond)
	d := &draw.Drawer{Store: f.e.Store, Seeds: f.acts, Chunk: 16}
	start := time.Now()
	if err := d.Run(ctx, aid); err != nil {
		t.Fatal(err)
	}
	won := f.outcome(t, aid)
	entries, _ := f.e.Store.DrawEntries(ctx, aid)
	var want []int64
	left := int64(10)
	for _, e := range draw.Order(entries, seedOf(7)) {
		if e.Qty <= left {
			left -= e.Qty
			want = append(want, e.UID)
		}
	}
	sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
	if got := winners(won); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("winners %v, want the seeded order's %v", got, want)
	}
	for uid := int64(1); uid <= 40; uid++ {
		r, err := stocktest.Reserve(ctx, f.e.Store, aid, uid, 1+uid%2, reqID(uid))
		_, st, stNo, serr := f.e.Store.DrawEntry(ctx, aid, uid)
		if serr != nil {
			t.Fatal(serr)
		}
		if no, ok := won[uid]; ok {
			o, _ := f.e.Store.Order(ctx, no)
			if err != nil || !r.Replay || r.OrderNo != no || r.State != domain.StateReserved || st != "won" ||
				stNo != no {
				t.Fatalf("winner %d replay: %+v, %v; entry %q", uid, r, err, st)
			}
			if exp := o.ExpireAt - 900_000; exp < start.UnixMilli()-1000 || exp > time.Now().UnixMilli() {
				t.Fatalf("winner %d's order expires at %d: not pay_timeout after the draw", uid, o.ExpireAt)
			}
			continue
		}
		if xerr.CodeOf(err) != xerr.SoldOut || st != "lost" {
			t.Fatalf("loser %d replay: %+v, %v (want SOLD_OUT); entry %q", uid, r, err, st)
		}
	}
	p, _ := f.e.Store.Draw(ctx, aid)
	if p.Status != domain.DrawDone || p.Winners != int64(len(want)) || p.Winners+lost(t, f.e, aid) != 40 ||
		p.Entries != 40 {
		t.Fatalf("draw progress %+v, want done with %d winners", p, len(want))
	}
	// Arrival order from now on: stock came back, a new buyer gets it.
	if _, err := f.e.Store.Release(ctx, won[want[0]], want[0], domain.StateCancelled); err != nil {
		t.Fatal(err)
	}
	if r, err := stocktest.Reserve(ctx, f.e.Store, aid, 99, 1, reqID(99)); err != nil || r.State != domain.StateReserved {
		t.Fatalf("after the draw: %+v, %v; want a reserved order", r, err)
	}
	f.e.CheckInvariant(aid)
}

// Once the stock is gone the rest are marked lost in calls of thousands (loserChunk): a draw with
// far more entrants than stock ends done, every loser's replay SOLD_OUT. The advance script once
// unpacked 8,192 HSET arguments, past Lua's limit, and every such draw stayed "drawing"; and a
// failed advance (BUSY) was taken for another drawer's move, so Run returned nil.
func TestDrawRecordsThousandsOfLosers(t *testing.T) {
	f := newFixture(t)
	const n = 2*4096 + 700
	aid := f.activity(t, 6, n, seedOf(11), time.Second)
	d := &draw.Drawer{Store: f.e.Store, Seeds: f.acts}
	if err := d.Run(ctx, aid); err != nil {
		t.Fatal(err)
	}
	won := f.outcome(t, aid)
	p, _ := f.e.Store.Draw(ctx, aid)
	if p.Status != domain.DrawDone || p.Winners != int64(len(won)) || p.Winners+lost(t, f.e, aid) != n ||
		p.Entries != int64(n) {
		t.Fatalf("draw progress %+v with %d winners, want done with %d decided", p, len(won), n)
	}
	for _, uid := range []int64{1, 2, n / 2, n - 1, n} {
		if _, ok := won[uid]; ok {
			continue
		}
		if _, err := stocktest.Reserve(ctx, f.e.Store, aid, uid, 1+uid%2, reqID(uid)); xerr.CodeOf(err) != xerr.SoldOut {
			t.Fatalf("loser %d replay: %v, want SOLD_OUT", uid, err)
		}
	}
	f.e.CheckInvariant(aid)
}

// A drawer abandoned mid-draw (its lease not released, as by kill -9) is taken over once the
// lease lapses; the draw resumes with the same order: the same winners as an uninterrupted
// draw with the same seed, no entrant with two orders, and the abandoned drawer cannot go on.
func TestDrawTakeoverSameWinners(t *testing.T) {
	f := newFixture(t)
	const n, total = 600, 150
	a := f.activity(t, total, n, seedOf(12345), 1500*time.Millisecond)
	b := f.activity(t, total, n, seedOf(12345), 800*time.Millisecond)
	lease := time.Second
	d1 := &draw.Drawer{Store: f.e.Store, Seeds: f.acts, Chunk: 50, Lease: lease}
	d2 := &draw.Drawer{Store: f.e.Store, Seeds: f.acts, Chunk: 50, Lease: lease}
	if err := d1.Run(ctx, b); err != nil {
		t.Fatal(err)
	}
	want := winners(f.outcome(t, b))
	r1, err := d1.Begin(ctx, a)
	if err != nil || r1 == nil {
		t.Fatalf("begin: %v, %v", r1, err)
	}
	for range 2 {
		if done, err := r1.Step(ctx); done || err != nil {
			t.Fatalf("step: %v %v", done, err)
		}
	}
	if r2, err := d2.Begin(ctx, a); r2 != nil || err != nil {
		t.Fatalf("a second drawer began while the lease is held: %v, %v", r2, err)
	}
	time.Sleep(lease + 700*time.Millisecond) // go-zero's lock adds 500 ms to its lease
	if err := d2.Run(ctx, a); err != nil {
		t.Fatal(err)
	}
	if p, _ := f.e.Store.Draw(ctx, a); p.Status != domain.DrawDone {
		t.Fatalf("the second drawer did not take the draw over: %+v", p)
	}
	if done, err := r1.Step(ctx); err == nil {
		t.Fatalf("the abandoned drawer stepped on: done %v", done)
	}
	got := winners(f.outcome(t, a))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("winners after a takeover differ from an uninterrupted draw:\n got %v\nwant %v", got, want)
	}
	if len(got) < 50 {
		t.Fatalf("only %d winners", len(got))
	}
	if want := f.recomputed(t, a); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("winners after a takeover differ from the audit's recomputation:\n got %v\nwant %v", got, want)
	}
	for _, aid := range []int64{a, b} {
		if c := f.e.CheckInvariant(aid); c.Remaining > 1 {
			t.Fatalf("stock left after the draw: %+v", c)
		}
	}
}

// BenchmarkDraw100k measures drawing 100,000 entries (2,000 stock): the reported ns/op is one
// whole draw, from the first chunk to the last advance (docs/DESIGN.md, "The opening draw").
func BenchmarkDraw100k(b *testing.B) {
	db := testenv.MySQL(b)
	e := stocktest.New(b)
	acts := model.NewActivityModel(db.Conn)
	for range b.N {
		b.StopTimer()
		now := time.Now()
		id, err := acts.InsertWithInventory(ctx, &model.Activity{SkuId: 7, Name: "draw", Total: 2000,
			StartTime: now.Add(-time.Minute).Unix(), EndTime: now.Add(time.Hour).Unix(), PerUserLimit: 1,
			PayTimeoutSeconds: 900, MerchantId: 1, DrawSeconds: 60})
		if err != nil {
			b.Fatal(err)
		}
		e.Warm(stocktest.Spec{ID: id, Total: 2000, Limit: 1, DrawAt: now.Add(time.Hour)})
		for i := 0; i < 100_000; i += stock.MaxReserveBatch {
			var items []domain.ReserveItem
			for u := i + 1; u <= min(i+stock.MaxReserveBatch, 100_000); u++ {
				items = append(items, domain.ReserveItem{UID: int64(u), Qty: 1, RequestID: reqID(int64(u))})
			}
			res, err := e.Store.ReserveBatch(ctx, id, items, time.Time{})
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range res {
				if r.Err != nil {
					b.Fatal(r.Err)
				}
			}
		}
		// The window ends now: entering 100,000 buyers takes longer than a short window.
		if err := e.Redis.HsetCtx(ctx, e.Keys.Stock(id), "draw_at", fmt.Sprint(time.Now().UnixMilli())); err != nil {
			b.Fatal(err)
		}
		d := &draw.Drawer{Store: e.Store, Seeds: acts}
		b.StartTimer()
		if err := d.Run(ctx, id); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if p, _ := e.Store.Draw(ctx, id); p.Status != domain.DrawDone || p.Winners != 2000 || lost(b, e, id) != 98_000 {
			b.Fatalf("draw %+v", p)
		}
		b.StartTimer()
	}
}

// Fairness, measured against real Redis and MariaDB: 5 seeds, 20,000 entrants in arrival order
// (every tenth sends 10 reservations with fresh request ids), 2,000 stock. The earliest 10 % of
// entrants win as often as the rest (mean ratio within [0.9, 1.1]) and a buyer sending 10 wins
// at most 1.1× as often as one sending 1; first come, first served is logged for contrast.
func TestDrawFairness(t *testing.T) {
	if testing.Short() {
		t.Skip("20,000 entrants × 5 draws")
	}
	f := newFixture(t)
	const n, total = 20_000, 2_000
	var early, many float64
	for seed := 1; seed <= 5; seed++ {
		now := time.Now()
		id, err := f.acts.InsertWithInventory(ctx, &model.Activity{SkuId: 7, Name: "fair", Total: total,
			StartTime: now.Add(-time.Minute).Unix(), EndTime: now.Add(time.Hour).Unix(), PerUserLimit: 1,
			PayTimeoutSeconds: 900, MerchantId: 1, DrawSeconds: 60, DrawSeed: string(seedOf(seed))})
		if err != nil {
			t.Fatal(err)
		}
		f.e.Warm(stocktest.Spec{ID: id, Total: total, Limit: 1, DrawAt: now.Add(time.Hour)})
		enter(t, f.e.Store, id, n)
		if err := f.e.Redis.HsetCtx(ctx, f.e.Keys.Stock(id), "draw_at", fmt.Sprint(time.Now().UnixMilli())); err != nil {
			t.Fatal(err)
		}
		if err := (&draw.Drawer{Store: f.e.Store, Seeds: f.acts}).Run(ctx, id); err != nil {
			t.Fatal(err)
		}
		won := f.outcome(t, id)
		e, m := rates(won, n)
		t.Logf("seed %d: win rate earliest 10%% / rest = %.3f, 10 requests / 1 request = %.3f", seed, e, m)
		early += e / 5
		many += m / 5
	}
	// The contrast: the same arrivals without a draw.
	now := time.Now()
	id := f.e.Warm(stocktest.Spec{Total: total, Limit: 1, Start: now.Add(-time.Minute)})
	enter(t, f.e.Store, id, n)
	e, m := rates(f.outcome(t, id), n)
	t.Logf("mean over 5 draws: earliest 10%% / rest = %.3f, 10 requests / 1 = %.3f; "+
		"without a draw: earliest 10%% / rest = %.3f, 10 requests / 1 = %.3f", early, many, e, m)
	if early < 0.9 || early > 1.1 || many > 1.1 {
		t.Fatalf("unfair draw: earliest 10%% / rest = %.3f, 10 requests / 1 = %.3f", early, many)
	}
}

// enter sends buyers 1..n in arrival order, in batches as the coalescer would; every tenth buyer
// sends 10 reservations with fresh request ids, the rest one.
func enter(t *testing.T, st *stock.Store, id int64, n int) {
	t.Helper()
	var items []domain.ReserveItem
	flush := func() {
		if len(items) == 0 {
			return
		}
		res, err := st.ReserveBatch(ctx, id, items, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil && xerr.CodeOf(r.Err) != xerr.SoldOut && xerr.CodeOf(r.Err) != xerr.LimitExceeded {
				t.Fatal(r.Err)
			}
		}
		items = items[:0]
	}
	for u := int64(1); u <= int64(n); u++ {
		tries := 1
		if u%10 == 0 {
			tries = 10
		}
		for k := range tries {
			items = append(items, domain.ReserveItem{UID: u, Qty: 1, RequestID: fmt.Sprintf("%s-%d", reqID(u), k)})
			if len(items) == stock.MaxReserveBatch {
				flush()
			}
		}
	}
	flush()
}

// rates are the win rate of the earliest 10 % of buyers over the rest's, and of the buyers
// sending 10 requests over those sending 1.
func rates(won map[int64]string, n int) (early, many float64) {
	var w [4]float64 // early, late, many, one: wins
	var c [4]float64 // and counts
	for u := int64(1); u <= int64(n); u++ {
		_, ok := won[u]
		g, h := 1, 3
		if u <= int64(n/10) {
			g = 0
		}
		if u%10 == 0 {
			h = 2
		}
		for _, i := range []int{g, h} {
			c[i]++
			if ok {
				w[i]++
			}
		}
	}
	ratio := func(a, b int) float64 {
		if w[b] == 0 {
			return math.Inf(1)
		}
		return (w[a] / c[a]) / (w[b] / c[b])
	}
	return ratio(0, 1), ratio(2, 3)
}

// The commitment to a draw's seed is the contract's, computed here from the standard library
// alone: the lowercase hex SHA-256 of the seed's bytes, and none without a seed.
func TestCommitmentIsTheSeedsSHA256(t *testing.T) {
	for n := range 5 {
		seed := seedOf(n)
		sum := sha256.Sum256(seed)
		if c := draw.Commitment(seed); c != hex.EncodeToString(sum[:]) || c != strings.ToLower(c) {
			t.Fatalf("commitment %q", c)
		}
	}
	if draw.Commitment(nil) != "" {
		t.Fatal("no seed, yet a commitment")
	}
}
