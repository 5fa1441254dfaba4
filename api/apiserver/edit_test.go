package apiserver_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/seckill/seckill/api/gatekeys"
	"github.com/seckill/seckill/devkit/apiclient"
)

// editedRow is an activity's edited columns as MySQL holds them, read straight from the
// database (not through the code under test).
type editedRow struct {
	SkuID, Limit, PayTimeout, DrawSeconds, Price, Total int64
	Name                                                string
	Start, End                                          int64
}

func (e *env) mysqlActivity(aid int64) editedRow {
	e.t.Helper()
	var r editedRow
	err := e.db.DB.QueryRow("SELECT `sku_id`, `name`, `start_time`, `end_time`, `per_user_limit`, "+
		"`pay_timeout_seconds`, `draw_seconds`, `price`, `total` FROM `activity` WHERE `id` = ?", aid).
		Scan(&r.SkuID, &r.Name, &r.Start, &r.End, &r.Limit, &r.PayTimeout, &r.DrawSeconds, &r.Price, &r.Total)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// redisActivity is the warmed copy of the same fields, read straight from the stock hash
// (DrawSeconds: draw_at - start, 0 without draw_at; Total: the hash's total).
func (e *env) redisActivity(aid int64) editedRow {
	e.t.Helper()
	v, err := e.rds.Hmget(e.keys.Stock(aid), "sku", "name", "start", "end", "limit", "ttl", "draw_at", "price",
		"total")
	if err != nil {
		e.t.Fatal(err)
	}
	n := func(s string) int64 { x, _ := strconv.ParseInt(s, 10, 64); return x }
	r := editedRow{SkuID: n(v[0]), Name: v[1], Start: n(v[2]), End: n(v[3]), Limit: n(v[4]), PayTimeout: n(v[5]),
		Price: n(v[7]), Total: n(v[8])}
	if v[6] != "" {
		r.DrawSeconds = n(v[6])/1000 - r.Start
	}
	return r
}

// editBody is a PUT body: create's fields for a, then fields.
func editBody(a activity, fields map[string]any) map[string]any {
	b := map[string]any{"sku_id": a.SkuID, "name": a.Name, "start_time": a.StartTime, "end_time": a.EndTime,
		"per_user_limit": a.PerUserLimit, "pay_timeout_seconds": a.PayTimeoutSeconds}
	for k, v := range fields {
		b[k] = v
	}
	return b
}

func activityPath(aid int64) string { return fmt.Sprintf("/v1/admin/activities/%d", aid) }

// untilUnix sleeps until the unix second s has begun.
func untilUnix(s int64) { time.Sleep(time.Until(time.Unix(s, 0))) }

// TestEditBeforeStart: an edit before the start changes MySQL and the warmed copy alike
// (what create set, the draw's seconds included), and the sale that opens follows it: a buyer
// may take the new per-user limit at the new price. After the start the same edit is 409
// STARTED and changes nothing, in either book.
func TestEditBeforeStart(t *testing.T) {
	e := start(t)
	tok := merchantToken(t, merchantID)
	now := time.Now().Unix()
	a := e.warm(map[string]any{"stock": 10, "start_time": now + 3600, "end_time": now + 7200, "price": 100})
	opens := time.Now().Unix() + 3
	var got struct {
		activity
		DrawSeconds int64 `json:"draw_seconds"`
		Price       int64 `json:"price"`
		Draw        *struct {
			Commitment string `json:"commitment"`
		} `json:"draw"`
	}
	body := editBody(a, map[string]any{"sku_id": 43, "name": "phone, edited", "start_time": opens,
		"end_time": opens + 600, "per_user_limit": 3, "pay_timeout_seconds": 120, "price": 250, "draw_seconds": 30,
		"stock": 10})
	e.call(http.MethodPut, activityPath(a.ActivityID), tok, body, &got)
	want := editedRow{SkuID: 43, Name: "phone, edited", Start: opens, End: opens + 600, Limit: 3, PayTimeout: 120,
		DrawSeconds: 30, Price: 250, Total: 10}
	if got.Name != want.Name || got.StartTime != opens || got.PerUserLimit != 3 || got.Price != 250 ||
		got.DrawSeconds != 30 || got.Stock != 10 || got.Draw == nil || len(got.Draw.Commitment) != 64 {
		t.Fatalf("edit answered %+v", got)
	}
	if m, r := e.mysqlActivity(a.ActivityID), e.redisActivity(a.ActivityID); m != want || r != want {
		t.Fatalf("after the edit: mysql %+v, redis %+v, want %+v", m, r, want)
	}

	// No draw after all: the window opens at the start, first come first served.
	body["draw_seconds"] = 0
	e.call(http.MethodPut, activityPath(a.ActivityID), tok, body, &got)
	want.DrawSeconds = 0
	if m, r := e.mysqlActivity(a.ActivityID), e.redisActivity(a.ActivityID); m != want || r != want {
		t.Fatalf("after removing the draw: mysql %+v, redis %+v, want %+v", m, r, want)
	}

	untilUnix(opens)
	var r priced
	e.call(http.MethodPost, "/v1/seckill/orders", buyerToken(t, 1), reserveBody(a.ActivityID, "edit-req-1", 3), &r)
	if r.amount() != 3*250 {
		t.Fatalf("reserved 3 at the edited price: amount %d, want %d", r.amount(), 3*250)
	}

	body["price"], body["per_user_limit"] = 1, 1
	e.expectErr(http.MethodPut, activityPath(a.ActivityID), tok, body, http.StatusConflict, "STARTED")
	if m, r := e.mysqlActivity(a.ActivityID), e.redisActivity(a.ActivityID); m != want || r != want {
		t.Fatalf("after a refused edit: mysql %+v, redis %+v, want %+v unchanged", m, r, want)
	}
}

// TestEditRefusals: bad edits are 4xx with their code and change nothing: a stock that is not
// the total (400), a start in the past (400), create's bounds (400), another merchant's or a
// missing activity (404), a started activity (409 STARTED).
func TestEditRefusals(t *testing.T) {
	e := start(t)
	tok := merchantToken(t, merchantID)
	now := time.Now().Unix()
	a := e.warm(map[string]any{"stock": 10, "start_time": now + 3600, "end_time": now + 7200})
	live := e.warm(map[string]any{"stock": 10})
	before, liveBefore := e.mysqlActivity(a.ActivityID), e.mysqlActivity(live.ActivityID)
	path := activityPath(a.ActivityID)
	for _, tc := range []struct {
		name   string
		path   string
		token  string
		fields map[string]any
		status int
		code   string
	}{
		{"stock not the total", path, tok, map[string]any{"stock": 11}, 400, "INVALID_ARGUMENT"},
		{"start in the past", path, tok, map[string]any{"start_time": now - 10}, 400, "INVALID_ARGUMENT"},
		{"end before start", path, tok, map[string]any{"end_time": a.StartTime - 1}, 400, "INVALID_ARGUMENT"},
		{"limit 0", path, tok, map[string]any{"per_user_limit": 0}, 400, "INVALID_ARGUMENT"},
		{"another merchant", path, merchantToken(t, merchantID+1), nil, 404, "ACTIVITY_NOT_FOUND"},
		{"missing", activityPath(999999), tok, nil, 404, "ACTIVITY_NOT_FOUND"},
		{"started", activityPath(live.ActivityID), tok, map[string]any{"start_time": now + 60}, 409, "STARTED"},
	} {
		e.expectErr(http.MethodPut, tc.path, tc.token, editBody(a, mergeName(tc.fields)), tc.status, tc.code)
	}
	if m, r := e.mysqlActivity(a.ActivityID), e.redisActivity(a.ActivityID); m != before || r.Name != before.Name ||
		r.Start != before.Start {
		t.Fatalf("refused edits changed the activity: mysql %+v, redis %+v, want %+v", m, r, before)
	}
	if m := e.mysqlActivity(live.ActivityID); m != liveBefore {
		t.Fatalf("a refused edit changed the started activity: %+v, want %+v", m, liveBefore)
	}
	// The total as it is now, after /stock, is accepted.
	e.call(http.MethodPost, path+"/stock", tok, map[string]any{"delta": 5}, nil)
	e.call(http.MethodPut, path, tok, editBody(a, map[string]any{"stock": 15, "name": "fifteen"}), nil)
	if m := e.mysqlActivity(a.ActivityID); m.Name != "fifteen" {
		t.Fatalf("edit with the current total: %+v", m)
	}
}

// mergeName adds a name every refused edit would have set, so that a refusal that changed
// the row shows.
func mergeName(fields map[string]any) map[string]any {
	out := map[string]any{"name": "refused"}
	for k, v := range fields {
		out[k] = v
	}
	return out
}

// TestEditIdempotent: a PUT retried with the same Idempotency-Key answers the first answer and
// applies once, at the gateway (its record) and at the inventory service (the key recorded in
// the edit's transaction), even after another edit changed the activity in between.
func TestEditIdempotent(t *testing.T) {
	e := start(t)
	now := time.Now().Unix()
	a := e.warm(map[string]any{"stock": 10, "start_time": now + 3600, "end_time": now + 7200})
	path := activityPath(a.ActivityID)
	raw := func(name string) string {
		return fmt.Sprintf(`{"sku_id":42,"name":%q,"start_time":%d,"end_time":%d}`, name, a.StartTime, a.EndTime)
	}
	c1, b1, _ := e.doKey(http.MethodPut, path, merchantID, "edit-key-1", raw("first"))
	e.call(http.MethodPut, path, merchantToken(t, merchantID), editBody(a, map[string]any{"name": "second"}), nil)
	c2, b2, h2 := e.doKey(http.MethodPut, path, merchantID, "edit-key-1", raw("first"))
	if c1 != http.StatusOK || c2 != c1 || !bytes.Equal(b1, b2) || h2.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("answers %d %s / %d %s", c1, b1, c2, b2)
	}
	if m, r := e.mysqlActivity(a.ActivityID), e.redisActivity(a.ActivityID); m.Name != "second" || r.Name != "second" {
		t.Fatalf("the retry applied again: mysql %q, redis %q, want second", m.Name, r.Name)
	}
	c3, b3, _ := e.doKey(http.MethodPut, path, merchantID, "edit-key-1", raw("third"))
	if c3 != http.StatusConflict || !bytes.Contains(b3, []byte("IDEMPOTENCY_CONFLICT")) {
		t.Fatalf("the key with another body: %d %s", c3, b3)
	}

	// The gateway's record lost (its Redis key expired or was never written): the inventory
	// service's own record still keeps the retry from applying again.
	if _, err := e.rds.Del(gatekeys.Keys{Prefix: e.keys.Prefix}.Idempotency(merchantID, "edit-key-1")); err != nil {
		t.Fatal(err)
	}
	c4, b4, _ := e.doKey(http.MethodPut, path, merchantID, "edit-key-1", raw("first"))
	if m := e.mysqlActivity(a.ActivityID); c4 != http.StatusOK || m.Name != "second" {
		t.Fatalf("retry without the gateway's record: %d %s, mysql name %q, want second", c4, b4, m.Name)
	}
}

// TestEditThroughTheClient: devkit/apiclient's Edit sends the PUT (stock only when set) and
// types its refusals: CodeStarted for a started activity, CodeInvalidArg for a stock that is
// not the total.
func TestEditThroughTheClient(t *testing.T) {
	e := start(t)
	c := apiclient.New(e.base, apiclient.Options{Conns: 1, Timeout: 10 * time.Second})
	defer c.Close()
	tok, ctx := merchantToken(t, merchantID), context.Background()
	now := time.Now().Unix()
	a := e.warm(map[string]any{"stock": 10, "start_time": now + 3600, "end_time": now + 7200})
	edit := apiclient.ActivityEdit{SkuID: 42, Name: "by the client", StartTime: a.StartTime, EndTime: a.EndTime,
		PerUserLimit: 2, Price: 300}
	got, err := c.Edit(ctx, tok, a.ActivityID, edit)
	if err != nil || got.Name != "by the client" || got.PerUserLimit != 2 || got.Price != 300 {
		t.Fatalf("edit: %+v %v", got, err)
	}
	eleven := int64(11)
	edit.Stock = &eleven
	if _, err := c.Edit(ctx, tok, a.ActivityID, edit); apiclient.CodeOf(err) != apiclient.CodeInvalidArg {
		t.Fatalf("stock 11 of 10: %v", err)
	}
	live := e.warm(map[string]any{"stock": 10})
	edit.Stock, edit.StartTime, edit.EndTime = nil, now+60, now+600
	if _, err := c.Edit(ctx, tok, live.ActivityID, edit); apiclient.CodeOf(err) != apiclient.CodeStarted {
		t.Fatalf("edit of a started activity: %v", err)
	}
}
