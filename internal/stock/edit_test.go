package stock_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
)

// TestEditMeta: Edit rewrites a warm activity's copy before its start (the window, limit,
// price, pay timeout, draw, the keys' expiry) and announces it on the stock-back channel as
// an edit; after the start it is STARTED and writes nothing; a cold activity stays cold and is
// announced all the same. The counters are never touched.
func TestEditMeta(t *testing.T) {
	e := stocktest.New(t)
	ps := e.Raw.Subscribe(ctx, e.Keys.StockBack())
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil { // the subscription's confirmation
		t.Fatal(err)
	}
	now := time.Now()
	aid := e.Warm(stocktest.Spec{Total: 10, Start: now.Add(time.Hour), End: now.Add(2 * time.Hour)})
	start := now.Add(30 * time.Minute).Unix()
	edit := domain.Activity{ActivityID: aid, SkuID: 9, Name: "edited", Start: start, End: start + 600, Limit: 4,
		PayTimeout: 60, ExpireAt: start + 600 + 60 + 86400, DrawAt: (start + 30) * 1000, Price: 700}
	if warm, err := e.Store.Edit(ctx, edit); err != nil || !warm {
		t.Fatalf("edit: warm %v, %v", warm, err)
	}
	got, err := e.Redis.Hgetall(e.Keys.Stock(aid))
	if err != nil {
		t.Fatal(err)
	}
	for f, v := range map[string]string{"start": itoa(start), "end": itoa(start + 600), "limit": "4", "ttl": "60",
		"sku": "9", "name": "edited", "price": "700", "draw_at": itoa((start + 30) * 1000), "drawn": "0",
		"exp": itoa(edit.ExpireAt), "total": "10", "remaining": "10"} {
		if got[f] != v {
			t.Errorf("field %s = %q, want %q", f, got[f], v)
		}
	}
	if ttl, _ := e.Redis.Ttl(e.Keys.Stock(aid)); int64(ttl) < edit.ExpireAt-time.Now().Unix()-5 {
		t.Errorf("the stock hash expires in %d s, want about %d", ttl, edit.ExpireAt-time.Now().Unix())
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	msg, err := ps.ReceiveMessage(rctx)
	if err != nil || msg.Payload != stock.WindowMessage(aid) {
		t.Fatalf("message %v %v, want %q", msg, err, stock.WindowMessage(aid))
	}
	if id, window, err := stock.ParseMessage(msg.Payload); err != nil || !window || id != aid {
		t.Fatalf("parsed %d %v %v", id, window, err)
	}

	edit.DrawAt = 0 // the draw removed
	if _, err := e.Store.Edit(ctx, edit); err != nil {
		t.Fatal(err)
	}
	if ok, _ := e.Redis.Hexists(e.Keys.Stock(aid), "draw_at"); ok {
		t.Error("draw_at kept after the draw was removed")
	}

	live := e.Warm(stocktest.Spec{Total: 10})
	before, _ := e.Redis.Hgetall(e.Keys.Stock(live))
	edit.ActivityID = live
	if _, err := e.Store.Edit(ctx, edit); !errors.Is(err, xerr.ErrStarted) {
		t.Fatalf("edit of a started activity: %v", err)
	}
	if after, _ := e.Redis.Hgetall(e.Keys.Stock(live)); after["price"] != before["price"] ||
		after["start"] != before["start"] || after["limit"] != before["limit"] {
		t.Fatalf("a refused edit wrote: %v, was %v", after, before)
	}

	cold := live + 1
	edit.ActivityID = cold
	if warm, err := e.Store.Edit(ctx, edit); err != nil || warm {
		t.Fatalf("cold: warm %v, %v", warm, err)
	}
	if _, err := e.Store.Stock(ctx, cold); !errors.Is(err, stock.ErrNotWarm) {
		t.Fatalf("a cold activity was written: %v", err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
