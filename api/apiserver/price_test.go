package apiserver_test

import (
	"fmt"
	"net/http"
	"testing"
)

// priced is what every activity view shows of a price, and every order view and reservation
// answer of an amount.
type priced struct {
	ActivityID int64  `json:"activity_id"`
	OrderNo    string `json:"order_no"`
	Quantity   int64  `json:"quantity"`
	Status     string `json:"status"`
	Price      *int64 `json:"price"`
	Amount     *int64 `json:"amount"`
}

func (p priced) price() int64  { return deref(p.Price) }
func (p priced) amount() int64 { return deref(p.Amount) }

func deref(v *int64) int64 {
	if v == nil {
		return -1 // absent: no view of the contract leaves it out
	}
	return *v
}

// An activity's price shows in every view of it; a reservation, its replay and the order carry
// quantity x price.
func TestPriceInEveryViewAndAmountInEveryOrder(t *testing.T) {
	e := start(t)
	merchant, buyer := merchantToken(t, merchantID), buyerToken(t, 300)
	a := e.warm(map[string]any{"stock": 10, "per_user_limit": 3, "price": 1999})

	var created, admin, buyerView priced
	e.call(http.MethodPost, "/v1/admin/activities", merchant, map[string]any{"sku_id": 1, "name": "priced",
		"stock": 1, "start_time": a.StartTime, "end_time": a.EndTime, "price": 250}, &created)
	e.call(http.MethodGet, fmt.Sprintf("/v1/admin/activities/%d", a.ActivityID), merchant, nil, &admin)
	e.call(http.MethodGet, fmt.Sprintf("/v1/activities/%d", a.ActivityID), buyer, nil, &buyerView)
	var list struct{ Activities []priced }
	e.call(http.MethodGet, "/v1/admin/activities", merchant, nil, &list)
	if created.price() != 250 || admin.price() != 1999 || buyerView.price() != 1999 || len(list.Activities) != 2 ||
		list.Activities[0].price() != 250 || list.Activities[1].price() != 1999 {
		t.Fatalf("prices: created %d, admin %d, buyer %d, list %+v", created.price(), admin.price(),
			buyerView.price(), list.Activities)
	}
	free := e.create(nil)
	var freeView priced
	e.call(http.MethodGet, fmt.Sprintf("/v1/admin/activities/%d", free.ActivityID), merchant, nil, &freeView)
	if freeView.price() != 0 {
		t.Fatalf("price defaults to %d, want 0", freeView.price())
	}

	var r, replay, order priced
	e.call(http.MethodPost, "/v1/seckill/orders", buyer, reserveBody(a.ActivityID, "priced-order", 3), &r)
	e.call(http.MethodPost, "/v1/seckill/orders", buyer, reserveBody(a.ActivityID, "priced-order", 3), &replay)
	e.call(http.MethodGet, orderPath(r.OrderNo, ""), buyer, nil, &order)
	if r.amount() != 3*1999 || replay.amount() != 3*1999 || order.amount() != 3*1999 {
		t.Fatalf("amounts: reservation %d, replay %d, order %d; want %d", r.amount(), replay.amount(),
			order.amount(), 3*1999)
	}
}

// The price is fixed once the activity starts: what the service answers after the start is the
// price it read then, whatever the row says later.
func TestPriceFixedAfterStart(t *testing.T) {
	e := start(t)
	buyer := buyerToken(t, 301)
	a := e.warm(map[string]any{"stock": 5, "per_user_limit": 2, "price": 500})
	var r, order priced
	e.call(http.MethodPost, "/v1/seckill/orders", buyer, reserveBody(a.ActivityID, "fixed-price-1", 2), &r)
	if _, err := e.db.DB.Exec("UPDATE activity SET price = 1 WHERE id = ?", a.ActivityID); err != nil {
		t.Fatal(err)
	}
	e.call(http.MethodGet, orderPath(r.OrderNo, ""), buyer, nil, &order)
	var r2 priced
	e.call(http.MethodPost, "/v1/seckill/orders", buyerToken(t, 302), reserveBody(a.ActivityID, "fixed-price-2", 1), &r2)
	if r.amount() != 1000 || order.amount() != 1000 || r2.amount() != 500 {
		t.Fatalf("amounts after the row changed: %d, %d, %d; want 1000, 1000, 500", r.amount(), order.amount(),
			r2.amount())
	}
}
