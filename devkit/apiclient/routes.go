package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/seckill/seckill/internal/paysign"
)

// Paths of the API's routes.
const (
	ReservePath     = "/v1/seckill/orders"
	AdminActivities = "/v1/admin/activities"
	HealthzPath     = "/healthz"
	// PaymentNotifyPath is the payment provider's notification (server to server, signed).
	PaymentNotifyPath = "/v1/payments/notify"
)

// AdminPath is /v1/admin/activities/{id}, followed by /suffix unless suffix is "".
func AdminPath(id int64, suffix string) string {
	p := AdminActivities + "/" + strconv.FormatInt(id, 10)
	if suffix != "" {
		p += "/" + suffix
	}
	return p
}

// OrderPath is /v1/seckill/orders/{order_no}, followed by /op unless op is "".
func OrderPath(orderNo, op string) string {
	p := ReservePath + "/" + url.PathEscape(orderNo)
	if op != "" {
		p += "/" + op
	}
	return p
}

// Buyer calls: each returns how the exchange went (Meta) besides the typed answer, as a
// load generator times and counts them.

// Reserve sends a reservation whose JSON body is already encoded (ReserveBody): a 200
// (Meta.Code CodeOK) or a 202 entry of the draw (CodeQueued) decodes into the Reservation.
func (c *Client) Reserve(ctx context.Context, token string, body []byte) (Reservation, Meta, error) {
	var r Reservation
	m, err := c.Do(ctx, http.MethodPost, ReservePath, token, body, &r)
	return r, m, err
}

// Pay confirms payment of a reserved order.
func (c *Client) Pay(ctx context.Context, token, orderNo string) (Order, Meta, error) {
	var o Order
	m, err := c.Do(ctx, http.MethodPost, OrderPath(orderNo, "pay"), token, nil, &o)
	return o, m, err
}

// Cancel releases a reserved order.
func (c *Client) Cancel(ctx context.Context, token, orderNo string) (Order, Meta, error) {
	var o Order
	m, err := c.Do(ctx, http.MethodPost, OrderPath(orderNo, "cancel"), token, nil, &o)
	return o, m, err
}

// Order reads one of the buyer's orders.
func (c *Client) Order(ctx context.Context, token, orderNo string) (Order, Meta, error) {
	var o Order
	m, err := c.Do(ctx, http.MethodGet, OrderPath(orderNo, ""), token, nil, &o)
	return o, m, err
}

// Entry reads the buyer's entry of an activity's opening draw.
func (c *Client) Entry(ctx context.Context, token string, activityID int64) (Entry, Meta, error) {
	var e Entry
	m, err := c.Do(ctx, http.MethodGet, "/v1/seckill/entries/"+strconv.FormatInt(activityID, 10), token, nil, &e)
	return e, m, err
}

// Activity is the buyer's read of an activity.
func (c *Client) Activity(ctx context.Context, token string, activityID int64) (BuyerActivity, Meta, error) {
	var a BuyerActivity
	m, err := c.Do(ctx, http.MethodGet, "/v1/activities/"+strconv.FormatInt(activityID, 10), token, nil, &a)
	return a, m, err
}

// Merchant calls.

// Create creates an activity.
func (c *Client) Create(ctx context.Context, token string, a NewActivity) (Activity, error) {
	var out Activity
	err := c.merchantDo(ctx, http.MethodPost, AdminActivities, token, a, &out)
	return out, err
}

// Edit replaces what create set of an activity before its start (CodeStarted after).
func (c *Client) Edit(ctx context.Context, token string, id int64, e ActivityEdit) (Activity, error) {
	var out Activity
	err := c.merchantDo(ctx, http.MethodPut, AdminPath(id, ""), token, e, &out)
	return out, err
}

// Warmup loads an activity's stock into Redis.
func (c *Client) Warmup(ctx context.Context, token string, id int64) (Warmup, error) {
	var w Warmup
	err := c.merchantDo(ctx, http.MethodPost, AdminPath(id, "warmup"), token, nil, &w)
	return w, err
}

// Adjust adds (delta > 0) or withdraws sellable stock.
func (c *Client) Adjust(ctx context.Context, token string, id, delta int64) (Adjusted, error) {
	var a Adjusted
	err := c.merchantDo(ctx, http.MethodPost, AdminPath(id, "stock"), token, map[string]int64{"delta": delta}, &a)
	return a, err
}

// Admin reads an activity with both books.
func (c *Client) Admin(ctx context.Context, token string, id int64) (Activity, error) {
	var a Activity
	err := c.merchantDo(ctx, http.MethodGet, AdminPath(id, ""), token, nil, &a)
	return a, err
}

// DrawAudit reads the audit of the activity's opening draw.
func (c *Client) DrawAudit(ctx context.Context, token string, id int64) (DrawAudit, error) {
	var a DrawAudit
	err := c.merchantDo(ctx, http.MethodGet, AdminPath(id, "draw"), token, nil, &a)
	return a, err
}

// Reconcile compares the activity's Redis and MySQL books now.
func (c *Client) Reconcile(ctx context.Context, token string, id int64) (Reconcile, error) {
	var r Reconcile
	err := c.merchantDo(ctx, http.MethodGet, AdminPath(id, "reconcile"), token, nil, &r)
	return r, err
}

// Orders is a page of the activity's orders (GET /v1/admin/activities/{id}/orders): status ""
// for every state, cursor "" from the start (else the NextCursor of the page before), size
// 1..500 (0: the route's default, 100).
func (c *Client) Orders(ctx context.Context, token string, id int64, status, cursor string,
	size int) (OrderPage, error) {
	q := url.Values{}
	if status != "" {
		q.Set("status", status)
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if size != 0 {
		q.Set("size", strconv.Itoa(size))
	}
	path := AdminPath(id, "orders")
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var p OrderPage
	err := c.merchantDo(ctx, http.MethodGet, path, token, nil, &p)
	return p, err
}

// List is a page of the merchant's activities (page from 1, size 1..100).
func (c *Client) List(ctx context.Context, token string, page, size int) (ActivityList, error) {
	var l ActivityList
	path := AdminActivities + "?page=" + strconv.Itoa(page) + "&size=" + strconv.Itoa(size)
	err := c.merchantDo(ctx, http.MethodGet, path, token, nil, &l)
	return l, err
}

// Healthz is the gateway's health: nil error only for a 200.
func (c *Client) Healthz(ctx context.Context) (Health, error) {
	var h Health
	_, err := c.Do(ctx, http.MethodGet, HealthzPath, "", nil, &h)
	return h, err
}

// Notify sends the payment provider's notification that orderNo was paid amount under tradeNo,
// signed with secret now (internal/paysign).
func (c *Client) Notify(ctx context.Context, secret []byte, orderNo string, amount int64,
	tradeNo string) (Payment, Meta, error) {
	body, err := json.Marshal(Payment{OrderNo: orderNo, Amount: amount, TradeNo: tradeNo})
	if err != nil {
		return Payment{}, Meta{Code: CodeRequest}, err
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	h := http.Header{}
	h.Set(paysign.HeaderTimestamp, ts)
	h.Set(paysign.HeaderSignature, paysign.Sign(secret, ts, body))
	var p Payment
	m, data, err := c.exchangeWith(ctx, http.MethodPost, PaymentNotifyPath, "", body, true, h)
	if err != nil {
		return p, m, err
	}
	m, err = c.answer(m, http.MethodPost, PaymentNotifyPath, data, &p)
	return p, m, err
}

// MerchantRetries bounds how often a merchant call waits out a 429 RATE_LIMITED.
const MerchantRetries = 30

// merchantDo is Do for the merchant routes: a 429 RATE_LIMITED (the gateway's MerchantLimit,
// counted per merchant across gateways) is waited out as its Retry-After says and sent again,
// as docs/API.md tells a client, at most MerchantRetries times.
func (c *Client) merchantDo(ctx context.Context, method, path, token string, body, out any) error {
	for try := 0; ; try++ {
		m, err := c.Do(ctx, method, path, token, body, out)
		if CodeOf(err) != CodeRateLimited || try >= MerchantRetries {
			return err
		}
		wait := time.Second
		if s, perr := strconv.Atoi(m.Header.Get("Retry-After")); perr == nil && s > 0 {
			wait = time.Duration(s) * time.Second
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}
