package rpcserver_test

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/activity"
	"github.com/seckill/seckill/rpc/inventory"
)

// rows counts the activity and inventory rows.
func (f *fixture) rows(t *testing.T) (activities, inventories int) {
	t.Helper()
	if err := f.db.Conn.QueryRow(&activities, "SELECT COUNT(*) FROM activity"); err != nil {
		t.Fatal(err)
	}
	if err := f.db.Conn.QueryRow(&inventories, "SELECT COUNT(*) FROM inventory"); err != nil {
		t.Fatal(err)
	}
	return activities, inventories
}

func newActivity(mid int64) *inventory.CreateActivityReq {
	now := time.Now().Unix()
	return &inventory.CreateActivityReq{MerchantId: mid, SkuId: 42, Name: "耳机 headphones", Total: 100,
		StartTime: now + 60, EndTime: now + 7200, PerUserLimit: 2, PayTimeoutSeconds: 900}
}

func TestCreateActivity(t *testing.T) {
	f := start(t)

	t.Run("written with its inventory, owned by the merchant, Redis untouched", func(t *testing.T) {
		createdWithItsInventory(t, f)
	})

	t.Run("bad input is InvalidArgument and writes nothing", func(t *testing.T) {
		// (Invalid UTF-8 cannot be sent: a proto3 string fails to marshal in the client.)
		acts, invs := f.rows(t)
		before := f.env.Dump()
		for name, edit := range map[string]func(*inventory.CreateActivityReq){
			"no merchant":         func(r *inventory.CreateActivityReq) { r.MerchantId = 0 },
			"negative merchant":   func(r *inventory.CreateActivityReq) { r.MerchantId = -7 },
			"sku 0":               func(r *inventory.CreateActivityReq) { r.SkuId = 0 },
			"empty name":          func(r *inventory.CreateActivityReq) { r.Name = "" },
			"long name":           func(r *inventory.CreateActivityReq) { r.Name = strings.Repeat("é", 129) },
			"total 0":             func(r *inventory.CreateActivityReq) { r.Total = 0 },
			"total too big":       func(r *inventory.CreateActivityReq) { r.Total = 1_000_000_001 },
			"negative start":      func(r *inventory.CreateActivityReq) { r.StartTime = -1 },
			"end before start":    func(r *inventory.CreateActivityReq) { r.EndTime = r.StartTime },
			"limit 0":             func(r *inventory.CreateActivityReq) { r.PerUserLimit = 0 },
			"limit too big":       func(r *inventory.CreateActivityReq) { r.PerUserLimit = 1_000_000_001 },
			"pay timeout 0":       func(r *inventory.CreateActivityReq) { r.PayTimeoutSeconds = 0 },
			"pay timeout too big": func(r *inventory.CreateActivityReq) { r.PayTimeoutSeconds = 86401 },
		} {
			in := newActivity(7)
			edit(in)
			_, err := f.client.CreateActivity(ctx, in)
			if gc, c := codeOf(err); gc != codes.InvalidArgument || c != xerr.InvalidArgument {
				t.Errorf("%s: got %s/%s (%v), want InvalidArgument", name, gc, c, err)
			}
		}
		if a, i := f.rows(t); a != acts || i != invs {
			t.Fatalf("rows changed: activity %d -> %d, inventory %d -> %d", acts, a, invs, i)
		}
		if after := f.env.Dump(); len(after) != len(before) {
			t.Fatalf("Redis changed: %d keys -> %d", len(before), len(after))
		}
	})

	t.Run("one transaction: a failed inventory insert leaves no activity", func(t *testing.T) {
		var next int64
		if err := f.db.Conn.QueryRow(&next, "SELECT COALESCE(MAX(id),0)+1 FROM activity"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.db.Conn.Exec("INSERT INTO inventory (activity_id, available) VALUES (?, 1)", next); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = f.db.Conn.Exec("DELETE FROM inventory WHERE activity_id = ?", next) })
		acts, _ := f.rows(t)
		_, err := f.client.CreateActivity(ctx, newActivity(7))
		if gc, c := codeOf(err); gc != codes.Internal || c != xerr.Internal {
			t.Fatalf("got %s/%s (%v), want Internal", gc, c, err)
		}
		if a, _ := f.rows(t); a != acts {
			t.Fatalf("activity rows %d -> %d: the activity was written without its inventory", acts, a)
		}
	})
}

func TestGetActivityIsMerchantScoped(t *testing.T) {
	f := start(t)
	res, err := f.client.CreateActivity(ctx, newActivity(7))
	if err != nil {
		t.Fatal(err)
	}
	created := res.GetActivity()
	id := created.GetActivityId()

	got, err := f.client.GetActivity(ctx, &inventory.GetActivityReq{ActivityId: id, MerchantId: 7})
	if err != nil || !proto.Equal(got.GetActivity(), created) {
		t.Fatalf("own activity: %v %v, want %v", got, err, created)
	}
	// An activity inserted without an owner (merchant_id 0) belongs to no merchant.
	unowned := f.insert(t, 5, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	for _, tc := range []struct {
		name string
		in   *inventory.GetActivityReq
		code codes.Code
		word xerr.Code
	}{
		{"another merchant's", &inventory.GetActivityReq{ActivityId: id, MerchantId: 8}, codes.NotFound,
			xerr.ActivityNotFound},
		{"unowned", &inventory.GetActivityReq{ActivityId: unowned, MerchantId: 7}, codes.NotFound, xerr.ActivityNotFound},
		{"unknown", &inventory.GetActivityReq{ActivityId: 999999, MerchantId: 7}, codes.NotFound, xerr.ActivityNotFound},
		{"activity id 0", &inventory.GetActivityReq{MerchantId: 7}, codes.InvalidArgument, xerr.InvalidArgument},
		{"no merchant", &inventory.GetActivityReq{ActivityId: id}, codes.InvalidArgument, xerr.InvalidArgument},
		{"negative merchant", &inventory.GetActivityReq{ActivityId: id, MerchantId: -7}, codes.InvalidArgument,
			xerr.InvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.client.GetActivity(ctx, tc.in)
			if gc, c := codeOf(err); gc != tc.code || c != tc.word {
				t.Fatalf("got %s/%s (%v), want %s/%s", gc, c, err, tc.code, tc.word)
			}
		})
	}
	// A read never warms Redis.
	if ok, _ := f.env.Redis.Exists(f.env.Keys.Stock(id)); ok {
		t.Fatal("GetActivity warmed the cache")
	}
}

func createdWithItsInventory(t *testing.T, f *fixture) {
	in := newActivity(7)
	res, err := f.client.CreateActivity(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	a := res.GetActivity()
	want := &inventory.Activity{ActivityId: a.GetActivityId(), SkuId: 42, Name: in.Name, Total: 100,
		StartTime: in.StartTime, EndTime: in.EndTime, PerUserLimit: 2, PayTimeoutSeconds: 900}
	if a.GetActivityId() < 1 || !proto.Equal(a, want) {
		t.Fatalf("got %v, want %v", a, want)
	}
	row, err := model.NewActivityModel(f.db.Conn).FindOne(ctx, uint64(a.ActivityId))
	if err != nil {
		t.Fatal(err)
	}
	if row.MerchantId != 7 || row.Total != 100 || row.Name != in.Name || row.PerUserLimit != 2 {
		t.Fatalf("activity row %+v", row)
	}
	inv, err := model.NewInventoryModel(f.db.Conn).FindOne(ctx, uint64(a.ActivityId))
	if err != nil {
		t.Fatal(err)
	}
	if inv.Available != 100 || inv.Locked != 0 || inv.Sold != 0 {
		t.Fatalf("inventory row %+v", inv)
	}
	// Only the Bloom filter of known activity ids is written (no stock, no keys of the
	// activity): the activity is recorded as known.
	dump := f.env.Dump()
	for k := range dump {
		if k == activity.BloomKey(f.env.Keys.Prefix) {
			delete(dump, k)
		}
	}
	if len(dump) != 0 {
		t.Fatalf("create wrote Redis: %v", dump)
	}
	// The loader reads it like any other activity.
	w, err := f.client.Warmup(ctx, &inventory.WarmupReq{ActivityId: a.ActivityId})
	if err != nil || !w.Warmed || w.GetStock().GetRemaining() != 100 {
		t.Fatalf("warmup: %v %v", w, err)
	}
}
