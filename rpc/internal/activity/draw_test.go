package activity_test

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/draw"
)

// Redis emptied during the draw's window: the loss rebuild restores every entry MySQL has
// (draw_entry) and draw_at, and the draw then picks exactly the winners it would have picked
// had nothing happened (the same entries, the seed from MySQL).
func TestRedisLossInTheWindowKeepsTheDraw(t *testing.T) {
	f := newFixture(t)
	entries := model.NewDrawEntryModel(f.db.Conn)
	f.loader.Entries = entries
	now := time.Now()
	const total, n = 7, 40
	id := f.insert(t, total, now.Add(-10*time.Second), now.Add(time.Hour))
	drawAt := now.Add(-10*time.Second).Unix() + 12
	acts := model.NewActivityModel(f.db.Conn)
	seed := bytes.Repeat([]byte{99}, model.DrawSeedBytes) // what creation fixes (the raw insert has none)
	if _, err := f.db.DB.Exec("UPDATE activity SET draw_seconds = 12, draw_seed = ? WHERE id = ?", seed, id); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.loader.Warmup(ctx, id); err != nil {
		t.Fatal(err)
	}
	var items []domain.ReserveItem
	for u := int64(1); u <= n; u++ {
		items = append(items, domain.ReserveItem{UID: u, Qty: 1, RequestID: fmt.Sprintf("entry-%08d", u)})
	}
	if _, err := f.env.Store.ReserveBatch(ctx, id, items, time.Time{}); err != nil {
		t.Fatal(err)
	}
	before, err := f.env.Store.DrawEntries(ctx, id)
	if err != nil || len(before) != n {
		t.Fatalf("entries %d, %v", len(before), err)
	}
	// The writer's part: every entered event into draw_entry.
	err = f.db.Conn.TransactCtx(ctx, func(ctx context.Context, s sqlx.Session) error {
		for _, ev := range f.env.Outbox(id) {
			if ev.Type != event.Entered {
				continue
			}
			if _, err := entries.InsertIgnore(ctx, s, &model.DrawEntry{ActivityId: uint64(id), Uid: uint64(ev.UID),
				Quantity: uint64(ev.Quantity), RequestId: ev.RequestID, EventId: ev.EventID, EnteredAt: ev.AtMs}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	testenv.DeletePrefix(f.env.Redis, f.env.Keys.Prefix) // Redis loses everything
	snap, err := f.loader.Stock(ctx, id)
	if err != nil || snap.DrawAt != drawAt*1000 || snap.Drawn {
		t.Fatalf("rebuild: %+v, %v; want draw_at %d", snap, err, drawAt*1000)
	}
	after, err := f.env.Store.DrawEntries(ctx, id)
	if err != nil || !reflect.DeepEqual(after, before) {
		t.Fatalf("entries after the rebuild differ (%v):\n%v\n%v", err, after, before)
	}
	time.Sleep(time.Until(time.Unix(drawAt, 0)) + 50*time.Millisecond)
	if err := (&draw.Drawer{Store: f.env.Store, Seeds: acts, Chunk: 8}).Run(ctx, id); err != nil {
		t.Fatal(err)
	}
	var want, got []int64
	for _, e := range draw.Order(before, seed)[:total] {
		want = append(want, e.UID)
	}
	nos, _ := stocktest.OrderNos(ctx, f.env.Store, id)
	for _, no := range nos {
		o, _ := f.env.Store.Order(ctx, no)
		got = append(got, o.UID)
	}
	sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("winners after the loss %v, want %v (as without it)", got, want)
	}
	f.env.CheckInvariant(id)
}
