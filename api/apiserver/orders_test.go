package apiserver_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/model"
)

// orderRow is an order of the merchant's list, as the JSON answer and the CSV export show it
// (the API client's type: the list is read through devkit/apiclient's Orders call).
type orderRow = apiclient.OrderRow

type orderPage = apiclient.OrderPage

var orderStates = []string{domain.StateReserved, domain.StatePaid, domain.StateCancelled, domain.StateExpired}

// insertOrders stores n orders of activity aid with the writer's own insert statement
// (SeckillOrderModel.InsertBatch; the harness runs no writer), in chunks of 2,000 rows, and
// returns them as the list should show them at price, in the order stored. Order i (from
// first) is in state orderStates[i%4]; a paid one with i%8 == 1 was paid through the provider.
func (e *env) insertOrders(aid int64, first, n int, price int64) []orderRow {
	e.t.Helper()
	orders := model.NewSeckillOrderModel(e.db.Conn)
	placed := time.Now().Unix() - 100
	want := make([]orderRow, 0, n)
	for start := first; start < first+n; start += 2000 {
		batch := make([]*model.SeckillOrder, 0, 2000)
		for i := start; i < min(start+2000, first+n); i++ {
			o := &model.SeckillOrder{OrderNo: fmt.Sprintf("%d-t%08d", aid, i), RequestId: fmt.Sprintf("r%d", i),
				ActivityId: uint64(aid), Uid: uint64(1000 + i), Quantity: uint64(1 + i%3),
				Status: orderStates[i%4], ExpireAt: placed + 900, PlacedAt: placed + int64(i%50)}
			if i%8 == 1 {
				o.TradeNo = fmt.Sprintf("T%d", i)
			}
			batch = append(batch, o)
			want = append(want, orderRow{OrderNo: o.OrderNo, UID: int64(o.Uid), Quantity: int64(o.Quantity),
				Amount: int64(o.Quantity) * price, Status: o.Status, TradeNo: o.TradeNo, CreatedAt: o.PlacedAt})
		}
		if err := orders.InsertBatch(context.Background(), e.db.Conn, batch); err != nil {
			e.t.Fatal(err)
		}
	}
	return want
}

func ordersPath(aid int64, q url.Values) string {
	p := fmt.Sprintf("/v1/admin/activities/%d/orders", aid)
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p
}

// sameOrders compares got with want (updated_at: the row's, within a minute of now).
func sameOrders(t *testing.T, what string, got, want []orderRow) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d orders, want %d", what, len(got), len(want))
	}
	now := time.Now().Unix()
	for i := range want {
		g := got[i]
		if g.UpdatedAt < now-60 || g.UpdatedAt > now+60 {
			t.Fatalf("%s: order %d updated_at %d, want about %d", what, i, g.UpdatedAt, now)
		}
		g.UpdatedAt = 0
		if g != want[i] {
			t.Fatalf("%s: order %d is %+v, want %+v", what, i, g, want[i])
		}
	}
}

func withStatus(rows []orderRow, status string) []orderRow {
	return slices.DeleteFunc(slices.Clone(rows), func(r orderRow) bool { return r.Status != status })
}

// pageAll reads every page of the list with size, calling between(i) after page i.
func (e *env) pageAll(aid int64, status string, size int, between func(page int)) []orderRow {
	e.t.Helper()
	var all []orderRow
	cursor := ""
	c := apiclient.New(e.base, apiclient.Options{})
	defer c.Close()
	for page := 0; ; page++ {
		p, err := c.Orders(context.Background(), merchantToken(e.t, merchantID), aid, status, cursor, size)
		if err != nil {
			e.t.Fatalf("page %d: %v", page, err)
		}
		if p.Orders == nil || len(p.Orders) > size {
			e.t.Fatalf("page %d: %d orders (nil: %v), size %d", page, len(p.Orders), p.Orders == nil, size)
		}
		all = append(all, p.Orders...)
		if p.NextCursor == "" {
			return all
		}
		if between != nil {
			between(page)
		}
		cursor = p.NextCursor
	}
}

// TestOrdersListPages: the merchant's orders list pages through every order of the activity
// exactly once, in the order stored, with its fields; orders stored between two pages come on
// the later pages; the status filter; bad input is 400 INVALID_ARGUMENT; another merchant's
// activity is 404.
func TestOrdersListPages(t *testing.T) {
	e := start(t)
	a := e.create(map[string]any{"stock": 1000, "price": 250})
	other := e.create(map[string]any{"stock": 1000, "price": 1})
	// Interleaved with another activity's orders, which never show.
	want := e.insertOrders(a.ActivityID, 0, 20, 250)
	e.insertOrders(other.ActivityID, 0, 5, 1)
	want = append(want, e.insertOrders(a.ActivityID, 20, 10, 250)...)

	got := e.pageAll(a.ActivityID, "", 7, func(page int) {
		if page == 1 { // 14 seen: 6 more, stored now, must come later
			e.insertOrders(other.ActivityID, 5, 3, 1)
			want = append(want, e.insertOrders(a.ActivityID, 30, 6, 250)...)
		}
	})
	sameOrders(t, "size 7", got, want)

	for _, s := range orderStates {
		sameOrders(t, "status "+s, e.pageAll(a.ActivityID, s, 3, nil), withStatus(want, s))
	}
	var p orderPage // the default size is 100: everything in one page, no cursor
	e.call(http.MethodGet, ordersPath(a.ActivityID, nil), merchantToken(t, merchantID), nil, &p)
	if len(p.Orders) != len(want) || p.NextCursor != "" {
		t.Fatalf("default size: %d orders, cursor %q; want %d and none", len(p.Orders), p.NextCursor, len(want))
	}
	var empty orderPage
	e.call(http.MethodGet, ordersPath(e.create(nil).ActivityID, nil), merchantToken(t, merchantID), nil, &empty)
	if empty.Orders == nil || len(empty.Orders) != 0 || empty.NextCursor != "" {
		t.Fatalf("an activity without orders: %+v, want an empty list", empty)
	}

	tok := merchantToken(t, merchantID)
	for _, q := range []url.Values{{"status": {"shipped"}}, {"status": {"PAID"}}, {"size": {"0"}},
		{"size": {"501"}}, {"size": {"-1"}}, {"size": {"abc"}}, {"cursor": {"xyz"}},
		{"cursor": {"bzow"}}, {"cursor": {"bzotMQ"}}, {"cursor": {"eDox"}}, {"cursor": {"bzowMQ"}}} {
		e.expectErr(http.MethodGet, ordersPath(a.ActivityID, q), tok, nil, http.StatusBadRequest, "INVALID_ARGUMENT")
	}
	e.expectErr(http.MethodGet, ordersPath(a.ActivityID, nil), merchantToken(t, merchantID+1), nil,
		http.StatusNotFound, "ACTIVITY_NOT_FOUND")
	e.expectErr(http.MethodGet, ordersPath(999999, nil), tok, nil, http.StatusNotFound, "ACTIVITY_NOT_FOUND")
}

// getCSV sends the list's request with Accept: text/csv and returns the answer.
func (e *env) getCSV(path, token string) *http.Response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.base+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/csv")
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// csvOrders reads a CSV export whole: its header, then its rows as orders.
func csvOrders(t *testing.T, body io.Reader) []orderRow {
	t.Helper()
	recs, err := csv.NewReader(body).ReadAll()
	if err != nil {
		t.Fatalf("CSV: %v", err)
	}
	if len(recs) == 0 || !slices.Equal(recs[0],
		[]string{"order_no", "uid", "quantity", "amount", "status", "trade_no", "created_at", "updated_at"}) {
		t.Fatalf("CSV header %q", recs[:min(1, len(recs))])
	}
	out := make([]orderRow, 0, len(recs)-1)
	n := func(s string) int64 {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("CSV number %q: %v", s, err)
		}
		return v
	}
	for _, r := range recs[1:] {
		out = append(out, orderRow{OrderNo: r[0], UID: n(r[1]), Quantity: n(r[2]), Amount: n(r[3]), Status: r[4],
			TradeNo: r[5], CreatedAt: n(r[6]), UpdatedAt: n(r[7])})
	}
	return out
}

// TestOrdersCSV: with Accept: text/csv the answer is text/csv, the header line and every
// matching order as the JSON list shows it (several of the export's pages of 1,000); errors
// before the export are the usual JSON errors.
func TestOrdersCSV(t *testing.T) {
	e := start(t)
	a := e.create(map[string]any{"stock": 1000, "price": 3})
	want := e.insertOrders(a.ActivityID, 0, 2500, 3)
	tok := merchantToken(t, merchantID)
	list := e.pageAll(a.ActivityID, "", 500, nil)
	sameOrders(t, "JSON list", list, want)

	for _, status := range []string{"", domain.StatePaid} {
		resp := e.getCSV(ordersPath(a.ActivityID, url.Values{"status": {status}}), tok)
		got := csvOrders(t, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" {
			t.Fatalf("status %q: %d %q", status, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		listed, stored := list, want
		if status != "" {
			listed, stored = withStatus(list, status), withStatus(want, status)
		}
		if !slices.Equal(got, listed) { // the JSON list read the same rows a moment ago
			t.Fatalf("status %q: the CSV's %d rows differ from the JSON list's %d", status, len(got), len(listed))
		}
		sameOrders(t, "CSV status "+status, got, stored)
	}

	for _, c := range []struct {
		path, token string
		status      int
		code        string
	}{
		{ordersPath(a.ActivityID, url.Values{"status": {"shipped"}}), tok, http.StatusBadRequest, "INVALID_ARGUMENT"},
		{ordersPath(a.ActivityID, url.Values{"cursor": {"nope"}}), tok, http.StatusBadRequest, "INVALID_ARGUMENT"},
		{ordersPath(a.ActivityID, nil), merchantToken(t, merchantID+1), http.StatusNotFound, "ACTIVITY_NOT_FOUND"},
	} {
		resp := e.getCSV(c.path, c.token)
		var eb errBody
		err := json.NewDecoder(resp.Body).Decode(&eb)
		_ = resp.Body.Close()
		if resp.StatusCode != c.status || err != nil || eb.Code != c.code {
			t.Errorf("CSV %s: %d %+v (%v), want %d %s", c.path, resp.StatusCode, eb, err, c.status, c.code)
		}
	}
}
