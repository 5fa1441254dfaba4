package apiserver_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
)

type activityView struct {
	ActivityID   int64  `json:"activity_id"`
	SkuID        int64  `json:"sku_id"`
	Name         string `json:"name"`
	StartTime    int64  `json:"start_time"`
	EndTime      int64  `json:"end_time"`
	PerUserLimit int64  `json:"per_user_limit"`
	Remaining    int64  `json:"remaining"`
	Status       string `json:"status"`
}

type orderView struct {
	OrderNo    string `json:"order_no"`
	ActivityID int64  `json:"activity_id"`
	Quantity   int64  `json:"quantity"`
	Status     string `json:"status"`
	ExpireAt   int64  `json:"expire_at"`
	CreatedAt  int64  `json:"created_at"`
}

type orderState struct {
	OrderNo string `json:"order_no"`
	Status  string `json:"status"`
}

func TestGetActivity(t *testing.T) {
	e := start(t)
	tok := buyerToken(t, 1)
	now := time.Now().Unix()
	live := e.create(map[string]any{"stock": 2, "per_user_limit": 2})
	upcoming := e.create(map[string]any{"start_time": now + 3600, "end_time": now + 7200})
	ended := e.create(map[string]any{"start_time": now - 7200, "end_time": now - 10})
	soldOut := e.warm(map[string]any{"stock": 1})
	e.call(http.MethodPost, "/v1/seckill/orders", buyerToken(t, 2), reserveBody(soldOut.ActivityID, "sellout-1", 1), nil)

	for _, tc := range []struct {
		name      string
		a         activity
		status    string
		remaining int64
	}{
		{"active (cold cache, backfilled)", live, "active", 2},
		{"upcoming", upcoming, "upcoming", 10},
		{"ended", ended, "ended", 10},
		{"sold out", soldOut, "sold_out", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v activityView
			e.call(http.MethodGet, fmt.Sprintf("/v1/activities/%d", tc.a.ActivityID), tok, nil, &v)
			want := activityView{ActivityID: tc.a.ActivityID, SkuID: tc.a.SkuID, Name: tc.a.Name,
				StartTime: tc.a.StartTime, EndTime: tc.a.EndTime, PerUserLimit: tc.a.PerUserLimit,
				Remaining: tc.remaining, Status: tc.status}
			if v != want {
				t.Fatalf("got %+v, want %+v", v, want)
			}
		})
	}
	t.Run("unknown id is 404 and cached as missing", func(t *testing.T) {
		e.expectErr(http.MethodGet, "/v1/activities/424242", tok, nil, http.StatusNotFound, "ACTIVITY_NOT_FOUND")
		if ok, _ := stock.NewStore(e.rds, e.keys).Missing(context.Background(), 424242); !ok {
			t.Fatal("unknown activity not cached as missing")
		}
	})
}

func TestReserveOutcomes(t *testing.T) {
	e := start(t)
	now := time.Now().Unix()
	a := e.warm(map[string]any{"stock": 3, "per_user_limit": 2, "pay_timeout_seconds": 600})
	buyer := buyerToken(t, 100)

	var first reserved
	t.Run("reserved", func(t *testing.T) {
		before := time.Now().Unix()
		e.call(http.MethodPost, "/v1/seckill/orders", buyer, reserveBody(a.ActivityID, "first-request", 1), &first)
		if first.ActivityID != a.ActivityID || first.Quantity != 1 || first.Status != "reserved" ||
			first.Remaining != 2 || first.ExpireAt < before+600 || first.ExpireAt > time.Now().Unix()+601 {
			t.Fatalf("reservation %+v", first)
		}
		if aid, ok := domain.ParseOrderNo(first.OrderNo); !ok || aid != a.ActivityID {
			t.Fatalf("order_no %q", first.OrderNo)
		}
	})
	t.Run("quantity defaults to 1", func(t *testing.T) {
		var r reserved
		e.call(http.MethodPost, "/v1/seckill/orders", buyerToken(t, 101),
			map[string]any{"activity_id": a.ActivityID, "request_id": "default-qty"}, &r)
		if r.Quantity != 1 || r.Remaining != 1 {
			t.Fatalf("got %+v", r)
		}
	})
	t.Run("replay returns the same order, nothing deducted", func(t *testing.T) {
		var again reserved
		e.call(http.MethodPost, "/v1/seckill/orders", buyer, reserveBody(a.ActivityID, "first-request", 1), &again)
		if again.OrderNo != first.OrderNo {
			t.Fatalf("replay gave %q, first %q", again.OrderNo, first.OrderNo)
		}
		if rem, _, _ := e.redisStock(a.ActivityID); rem != 1 {
			t.Fatalf("remaining %d after a replay, want 1", rem)
		}
	})
	t.Run("another user's request id is their own", func(t *testing.T) {
		var r reserved
		e.call(http.MethodPost, "/v1/seckill/orders", buyerToken(t, 102), reserveBody(a.ActivityID, "first-request", 1), &r)
		if r.OrderNo == first.OrderNo {
			t.Fatal("a request id of another user returned their order")
		}
	})
	t.Run("limit exceeded", func(t *testing.T) {
		e.expectErr(http.MethodPost, "/v1/seckill/orders", buyer, reserveBody(a.ActivityID, "too-many-2", 2),
			http.StatusConflict, "LIMIT_EXCEEDED")
	})
	t.Run("sold out", func(t *testing.T) {
		e.expectErr(http.MethodPost, "/v1/seckill/orders", buyerToken(t, 103), reserveBody(a.ActivityID, "sold-out-1", 1),
			http.StatusConflict, "SOLD_OUT")
		if rem, locked, _ := e.redisStock(a.ActivityID); rem != 0 || locked != 3 {
			t.Fatalf("remaining %d locked %d, want 0 and 3", rem, locked)
		}
	})
	t.Run("not started, ended, not found", func(t *testing.T) {
		upcoming := e.warm(map[string]any{"start_time": now + 3600, "end_time": now + 7200})
		e.expectErr(http.MethodPost, "/v1/seckill/orders", buyer, reserveBody(upcoming.ActivityID, "too-early", 1),
			http.StatusConflict, "NOT_STARTED")
		ended := e.create(map[string]any{"start_time": now - 7200, "end_time": now - 10})
		e.expectErr(http.MethodPost, "/v1/seckill/orders", buyer, reserveBody(ended.ActivityID, "too-late", 1),
			http.StatusConflict, "ENDED")
		e.expectErr(http.MethodPost, "/v1/seckill/orders", buyer, reserveBody(777777, "no-such-one", 1),
			http.StatusNotFound, "ACTIVITY_NOT_FOUND")
	})
	t.Run("busy when the cache cannot be loaded", func(t *testing.T) {
		cold := e.create(nil)
		// Another loader holds the backfill lock and never finishes.
		other := stock.NewStore(e.rds, e.keys).Lock(cold.ActivityID, "")
		other.SetExpire(30)
		if held, err := other.AcquireCtx(context.Background()); !held || err != nil {
			t.Fatalf("another loader's lease: %v, %v", held, err)
		}
		e.expectErr(http.MethodPost, "/v1/seckill/orders", buyer, reserveBody(cold.ActivityID, "cold-cache", 1),
			http.StatusServiceUnavailable, "BUSY")
		if e.orderCount(cold.ActivityID) != 0 {
			t.Fatal("a BUSY reservation left an order")
		}
	})
}

func TestOrderLifecycle(t *testing.T) {
	e := start(t)
	a := e.warm(map[string]any{"stock": 10, "per_user_limit": 5})
	owner, other := buyerToken(t, 200), buyerToken(t, 201)
	reserve := func(reqID string) reserved {
		t.Helper()
		var r reserved
		e.call(http.MethodPost, "/v1/seckill/orders", owner, reserveBody(a.ActivityID, reqID, 1), &r)
		return r
	}

	t.Run("get, pay, pay again, cancel a paid order", func(t *testing.T) {
		r := reserve("pay-flow-01")
		var o orderView
		e.call(http.MethodGet, orderPath(r.OrderNo, ""), owner, nil, &o)
		if o.OrderNo != r.OrderNo || o.ActivityID != a.ActivityID || o.Quantity != 1 || o.Status != "reserved" ||
			o.ExpireAt != r.ExpireAt || o.CreatedAt < time.Now().Unix()-60 || o.CreatedAt > time.Now().Unix() {
			t.Fatalf("order %+v (reservation %+v)", o, r)
		}
		var s orderState
		e.call(http.MethodPost, orderPath(r.OrderNo, "/pay"), owner, nil, &s)
		if s != (orderState{r.OrderNo, "paid"}) {
			t.Fatalf("pay %+v", s)
		}
		e.call(http.MethodPost, orderPath(r.OrderNo, "/pay"), owner, nil, &s)
		if s != (orderState{r.OrderNo, "paid"}) {
			t.Fatalf("pay again %+v", s)
		}
		e.expectErr(http.MethodPost, orderPath(r.OrderNo, "/cancel"), owner, nil, http.StatusConflict, "ORDER_PAID")
		e.call(http.MethodGet, orderPath(r.OrderNo, ""), owner, nil, &o)
		if o.Status != "paid" {
			t.Fatalf("status %q", o.Status)
		}
	})

	t.Run("cancel, cancel again, pay a cancelled order", func(t *testing.T) {
		r := reserve("cancel-flow")
		remBefore, _, _ := e.redisStock(a.ActivityID)
		var s orderState
		e.call(http.MethodPost, orderPath(r.OrderNo, "/cancel"), owner, nil, &s)
		if s != (orderState{r.OrderNo, "cancelled"}) {
			t.Fatalf("cancel %+v", s)
		}
		e.call(http.MethodPost, orderPath(r.OrderNo, "/cancel"), owner, nil, &s)
		if s != (orderState{r.OrderNo, "cancelled"}) {
			t.Fatalf("cancel again %+v", s)
		}
		if rem, _, _ := e.redisStock(a.ActivityID); rem != remBefore+1 {
			t.Fatalf("remaining %d after cancel, want %d", rem, remBefore+1)
		}
		e.expectErr(http.MethodPost, orderPath(r.OrderNo, "/pay"), owner, nil, http.StatusConflict, "ORDER_CLOSED")
	})

	t.Run("another user's order is 404 on every route", func(t *testing.T) {
		r := reserve("ownership-1")
		e.expectErr(http.MethodGet, orderPath(r.OrderNo, ""), other, nil, http.StatusNotFound, "ORDER_NOT_FOUND")
		e.expectErr(http.MethodPost, orderPath(r.OrderNo, "/pay"), other, nil, http.StatusNotFound, "ORDER_NOT_FOUND")
		e.expectErr(http.MethodPost, orderPath(r.OrderNo, "/cancel"), other, nil, http.StatusNotFound, "ORDER_NOT_FOUND")
		var o orderView
		e.call(http.MethodGet, orderPath(r.OrderNo, ""), owner, nil, &o)
		if o.Status != "reserved" {
			t.Fatalf("another user's attempts changed the order: %+v", o)
		}
	})

	t.Run("missing order is 404", func(t *testing.T) {
		missing := domain.NewOrderNo(a.ActivityID)
		e.expectErr(http.MethodGet, orderPath(missing, ""), owner, nil, http.StatusNotFound, "ORDER_NOT_FOUND")
		e.expectErr(http.MethodPost, orderPath(missing, "/pay"), owner, nil, http.StatusNotFound, "ORDER_NOT_FOUND")
		e.expectErr(http.MethodPost, orderPath(missing, "/cancel"), owner, nil, http.StatusNotFound, "ORDER_NOT_FOUND")
	})

	t.Run("expired order is closed", func(t *testing.T) { expiredOrderIsClosed(t, e, owner) })

	t.Run("after the activity, orders are read from MySQL", func(t *testing.T) { ordersReadFromMySQL(t, e, owner, other) })
}

func expiredOrderIsClosed(t *testing.T, e *env, owner string) {
	quick := e.warm(map[string]any{"stock": 1, "pay_timeout_seconds": 1})
	var r reserved
	e.call(http.MethodPost, "/v1/seckill/orders", owner, reserveBody(quick.ActivityID, "expires-soon", 1), &r)
	// Run the expiry the jobs would run, until the order is due.
	deadline := time.Now().Add(10 * time.Second)
	for {
		nos, err := e.rpc.Svc.Store.ExpireDue(context.Background(), quick.ActivityID, 10)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(nos, r.OrderNo) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("order never became due")
		}
		time.Sleep(100 * time.Millisecond)
	}
	var o orderView
	e.call(http.MethodGet, orderPath(r.OrderNo, ""), owner, nil, &o)
	if o.Status != "expired" {
		t.Fatalf("status %q, want expired", o.Status)
	}
	e.expectErr(http.MethodPost, orderPath(r.OrderNo, "/pay"), owner, nil, http.StatusConflict, "ORDER_CLOSED")
	e.expectErr(http.MethodPost, orderPath(r.OrderNo, "/cancel"), owner, nil, http.StatusConflict, "ORDER_CLOSED")
	if rem, _, _ := e.redisStock(quick.ActivityID); rem != 1 {
		t.Fatalf("remaining %d after expiry, want 1", rem)
	}
}

func ordersReadFromMySQL(t *testing.T, e *env, owner, other string) {
	// An order of an activity whose Redis keys are gone: only the ledger has it.
	gone := e.create(nil)
	no := domain.NewOrderNo(gone.ActivityID)
	if _, err := e.db.Conn.Exec("INSERT INTO seckill_order (order_no, request_id, activity_id, uid, quantity, "+
		"status, expire_at, placed_at) VALUES (?, 'from-mysql', ?, 200, 2, 'paid', 1700000900, 1700000000)",
		no, gone.ActivityID); err != nil {
		t.Fatal(err)
	}
	var o orderView
	e.call(http.MethodGet, orderPath(no, ""), owner, nil, &o)
	want := orderView{OrderNo: no, ActivityID: gone.ActivityID, Quantity: 2, Status: "paid",
		ExpireAt: 1700000900, CreatedAt: 1700000000}
	if o != want {
		t.Fatalf("got %+v, want %+v", o, want)
	}
	e.expectErr(http.MethodGet, orderPath(no, ""), other, nil, http.StatusNotFound, "ORDER_NOT_FOUND")
}

func orderPath(no, suffix string) string { return "/v1/seckill/orders/" + no + suffix }
