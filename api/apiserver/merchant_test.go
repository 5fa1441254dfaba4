package apiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/seckill/seckill/model"
)

func TestCreateActivity(t *testing.T) {
	e := start(t)
	now := time.Now().Unix()

	t.Run("defaults and shape", func(t *testing.T) {
		a := e.create(map[string]any{"name": "耳机 headphones", "stock": 100, "start_time": now + 60,
			"end_time": now + 7200})
		want := activity{ActivityID: a.ActivityID, SkuID: 42, Name: "耳机 headphones", Stock: 100,
			StartTime: now + 60, EndTime: now + 7200, PerUserLimit: 1, PayTimeoutSeconds: 900}
		if a.ActivityID < 1 || a != want {
			t.Fatalf("got %+v, want %+v", a, want)
		}
		// Written in MySQL with its inventory row and the merchant as owner.
		row, err := model.NewActivityModel(e.db.Conn).FindOne(t.Context(), uint64(a.ActivityID))
		if err != nil {
			t.Fatal(err)
		}
		if row.MerchantId != merchantID || row.Total != 100 || row.PayTimeoutSeconds != 900 {
			t.Fatalf("activity row %+v", row)
		}
		inv, err := model.NewInventoryModel(e.db.Conn).FindOne(t.Context(), uint64(a.ActivityID))
		if err != nil {
			t.Fatal(err)
		}
		if inv.Available != 100 || inv.Locked != 0 || inv.Sold != 0 {
			t.Fatalf("inventory row %+v", inv)
		}
	})

	t.Run("the owner is the token's merchant, never the body's", func(t *testing.T) {
		a := e.create(map[string]any{"merchant_id": merchantID + 1, "mid": merchantID + 1})
		row, err := model.NewActivityModel(e.db.Conn).FindOne(t.Context(), uint64(a.ActivityID))
		if err != nil {
			t.Fatal(err)
		}
		if row.MerchantId != merchantID {
			t.Fatalf("owner %d, want the token's %d", row.MerchantId, merchantID)
		}
	})

	t.Run("explicit limit and timeout", func(t *testing.T) {
		a := e.create(map[string]any{"per_user_limit": 3, "pay_timeout_seconds": 86400, "stock": 1_000_000_000})
		if a.PerUserLimit != 3 || a.PayTimeoutSeconds != 86400 || a.Stock != 1_000_000_000 {
			t.Fatalf("got %+v", a)
		}
	})

	t.Run("one transaction: a failed insert leaves no activity", func(t *testing.T) {
		var before int
		if err := e.db.Conn.QueryRow(&before, "SELECT COUNT(*) FROM activity"); err != nil {
			t.Fatal(err)
		}
		// Make the inventory insert fail: the next activity id already has an inventory row.
		var next int64
		if err := e.db.Conn.QueryRow(&next, "SELECT COALESCE(MAX(id),0)+1 FROM activity"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.Conn.Exec("INSERT INTO inventory (activity_id, available) VALUES (?, 1)", next); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = e.db.Conn.Exec("DELETE FROM inventory WHERE activity_id = ?", next) })
		e.expectErr(http.MethodPost, "/v1/admin/activities", merchantToken(t, merchantID),
			map[string]any{"sku_id": 1, "name": "x", "stock": 5, "start_time": now, "end_time": now + 60},
			http.StatusInternalServerError, "INTERNAL")
		var after int
		if err := e.db.Conn.QueryRow(&after, "SELECT COUNT(*) FROM activity"); err != nil {
			t.Fatal(err)
		}
		if after != before {
			t.Fatalf("activity rows %d -> %d: the activity was written without its inventory", before, after)
		}
	})
}

func TestMerchantBooks(t *testing.T) {
	e := start(t)
	tok := merchantToken(t, merchantID)
	a := e.create(map[string]any{"stock": 50})
	path := func(suffix string) string { return fmt.Sprintf("/v1/admin/activities/%d%s", a.ActivityID, suffix) }

	t.Run("cold: redis is null, db has the stock", func(t *testing.T) {
		var got struct {
			activity
			books
		}
		e.call(http.MethodGet, path(""), tok, nil, &got)
		if got.activity != a {
			t.Fatalf("activity %+v, want %+v", got.activity, a)
		}
		if got.Redis != nil || got.DB.Available != 50 || got.DB.Locked != 0 || got.DB.Sold != 0 {
			t.Fatalf("books %+v", got.books)
		}
		// The read did not warm it.
		if ok, _ := e.rds.Exists(e.keys.Stock(a.ActivityID)); ok {
			t.Fatal("GET admin activity warmed the cache")
		}
	})

	t.Run("warmup loads once", func(t *testing.T) { warmupLoadsOnce(t, e, tok, path) })

	t.Run("warmup never overwrites live stock", func(t *testing.T) {
		e.call(http.MethodPost, "/v1/seckill/orders", buyerToken(t, 5), reserveBody(a.ActivityID, "warm-check-1", 1), nil)
		var w struct {
			Warmed    bool  `json:"warmed"`
			Remaining int64 `json:"remaining"`
		}
		e.call(http.MethodPost, path("/warmup"), tok, nil, &w)
		if w.Warmed || w.Remaining != 49 {
			t.Fatalf("warmup after a sale %+v", w)
		}
	})

	type stockResp struct{ Total, Remaining, Locked, Sold int64 }
	t.Run("adjust", func(t *testing.T) {
		var s stockResp
		e.call(http.MethodPost, path("/stock"), tok, map[string]any{"delta": 10}, &s)
		if s != (stockResp{Total: 60, Remaining: 59, Locked: 1, Sold: 0}) {
			t.Fatalf("after +10: %+v", s)
		}
		e.call(http.MethodPost, path("/stock"), tok, map[string]any{"delta": -9}, &s)
		if s != (stockResp{Total: 51, Remaining: 50, Locked: 1, Sold: 0}) {
			t.Fatalf("after -9: %+v", s)
		}
		e.expectErr(http.MethodPost, path("/stock"), tok, map[string]any{"delta": -51},
			http.StatusConflict, "INSUFFICIENT_STOCK")
		if rem, locked, _ := e.redisStock(a.ActivityID); rem != 50 || locked != 1 {
			t.Fatalf("a refused withdrawal changed stock: remaining %d locked %d", rem, locked)
		}
	})

	t.Run("reconcile reports both books", func(t *testing.T) { reconcileReportsBothBooks(t, e, tok, a, path) })

	t.Run("not found: unknown id and another merchant's activity", func(t *testing.T) {
		notFoundForOthers(t, e, tok, a, path)
	})

	t.Run("warmup after the end is ENDED", func(t *testing.T) {
		now := time.Now().Unix()
		ended := e.create(map[string]any{"start_time": now - 7200, "end_time": now - 1})
		e.expectErr(http.MethodPost, fmt.Sprintf("/v1/admin/activities/%d/warmup", ended.ActivityID), tok, nil,
			http.StatusConflict, "ENDED")
	})
}

func reconcileReportsBothBooks(t *testing.T, e *env, tok string, a activity, path func(string) string) {
	var r struct {
		ActivityID int64  `json:"activity_id"`
		Status     string `json:"status"`
		books
		InFlight *int64          `json:"in_flight"`
		Diffs    json.RawMessage `json:"diffs"`
	}
	e.call(http.MethodGet, path("/reconcile"), tok, nil, &r)
	if r.ActivityID != a.ActivityID || r.Status == "" || r.InFlight == nil || r.Diffs == nil ||
		string(r.Diffs) == "null" {
		t.Fatalf("reconcile %+v diffs %s", r, r.Diffs)
	}
	if r.Redis == nil || r.Redis.Remaining != 50 || r.Redis.Locked != 1 || r.DB.Available != 50 {
		t.Fatalf("reconcile books %+v", r.books)
	}
}

func notFoundForOthers(t *testing.T, e *env, tok string, a activity, path func(string) string) {
	other := merchantToken(t, merchantID+1)
	for _, tc := range []struct {
		method, suffix string
		body           any
	}{
		{http.MethodGet, "", nil},
		{http.MethodPost, "/warmup", nil},
		{http.MethodPost, "/stock", map[string]any{"delta": 1}},
		{http.MethodGet, "/reconcile", nil},
	} {
		e.expectErr(tc.method, "/v1/admin/activities/999999"+tc.suffix, tok, tc.body,
			http.StatusNotFound, "ACTIVITY_NOT_FOUND")
		e.expectErr(tc.method, path(tc.suffix), other, tc.body, http.StatusNotFound, "ACTIVITY_NOT_FOUND")
	}
	if rem, _, _ := e.redisStock(a.ActivityID); rem != 50 {
		t.Fatalf("another merchant changed the stock: remaining %d", rem)
	}
}

func warmupLoadsOnce(t *testing.T, e *env, tok string, path func(string) string) {
	var w struct {
		Warmed    bool  `json:"warmed"`
		Remaining int64 `json:"remaining"`
	}
	e.call(http.MethodPost, path("/warmup"), tok, nil, &w)
	if !w.Warmed || w.Remaining != 50 {
		t.Fatalf("first warmup %+v", w)
	}
	e.call(http.MethodPost, path("/warmup"), tok, nil, &w)
	if w.Warmed || w.Remaining != 50 {
		t.Fatalf("second warmup %+v", w)
	}
	var got books
	e.call(http.MethodGet, path(""), tok, nil, &got)
	if got.Redis == nil || got.Redis.Remaining != 50 || got.Redis.Locked != 0 {
		t.Fatalf("warm books %+v", got)
	}
}
