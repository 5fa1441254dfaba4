package apiserver_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// applyAdjustment does to MySQL what the writer does with an Adjusted event (mq/internal/writer,
// recordAdjustments + writeInventory): the harness runs no writer.
func (e *env) applyAdjustment(aid, delta int64, eventID string) {
	e.t.Helper()
	tx, err := e.db.DB.Begin()
	if err != nil {
		e.t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.Exec("INSERT INTO stock_adjustment (event_id, activity_id, delta) VALUES (?, ?, ?)",
		eventID, aid, delta); err != nil {
		e.t.Fatal(err)
	}
	if _, err := tx.Exec("UPDATE activity SET total = total + ? WHERE id = ?", delta, aid); err != nil {
		e.t.Fatal(err)
	}
	if _, err := tx.Exec("UPDATE inventory SET available = available + ? WHERE activity_id = ?", delta, aid); err != nil {
		e.t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		e.t.Fatal(err)
	}
}

// TestAdjustments: the stock history lists the applied changes newest first, each with the
// total after it; another merchant's activity (and a missing one) is 404.
func TestAdjustments(t *testing.T) {
	e := start(t)
	tok := merchantToken(t, merchantID)
	a := e.warm(map[string]any{"stock": 10})
	path := fmt.Sprintf("/v1/admin/activities/%d/adjustments", a.ActivityID)

	var list struct {
		Adjustments []struct {
			Delta     int64 `json:"delta"`
			Total     int64 `json:"total"`
			CreatedAt int64 `json:"created_at"`
		} `json:"adjustments"`
	}
	e.call(http.MethodGet, path, tok, nil, &list)
	if list.Adjustments == nil || len(list.Adjustments) != 0 {
		t.Fatalf("before any change: %+v, want an empty list", list)
	}

	stock := fmt.Sprintf("/v1/admin/activities/%d/stock", a.ActivityID)
	for i, delta := range []int64{5, -3} {
		e.call(http.MethodPost, stock, tok, map[string]any{"delta": delta}, nil)
		e.applyAdjustment(a.ActivityID, delta, fmt.Sprintf("test-adjust-%d", i))
	}
	e.call(http.MethodGet, path, tok, nil, &list)
	want := []struct{ delta, total int64 }{{-3, 12}, {5, 15}}
	if len(list.Adjustments) != len(want) {
		t.Fatalf("adjustments %+v, want %v", list.Adjustments, want)
	}
	now := time.Now().Unix()
	for i, w := range want {
		got := list.Adjustments[i]
		if got.Delta != w.delta || got.Total != w.total || got.CreatedAt < now-60 || got.CreatedAt > now+60 {
			t.Errorf("adjustment %d: %+v, want delta %d total %d at about %d", i, got, w.delta, w.total, now)
		}
	}

	e.expectErr(http.MethodGet, path, merchantToken(t, merchantID+1), nil, http.StatusNotFound, "ACTIVITY_NOT_FOUND")
	e.expectErr(http.MethodGet, "/v1/admin/activities/999999/adjustments", tok, nil,
		http.StatusNotFound, "ACTIVITY_NOT_FOUND")
}
