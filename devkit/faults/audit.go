package faults

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/model"
)

type redisBook struct {
	Remaining int64 `json:"remaining"`
	Locked    int64 `json:"locked"`
	Sold      int64 `json:"sold"`
}

type dbBook struct {
	Available int64 `json:"available"`
	Locked    int64 `json:"locked"`
	Sold      int64 `json:"sold"`
}

type activityResp struct {
	ActivityID int64      `json:"activity_id"`
	Stock      int64      `json:"stock"`
	Redis      *redisBook `json:"redis"`
	DB         dbBook     `json:"db"`
}

type reconcileResp struct {
	Status string   `json:"status"`
	Diffs  []string `json:"diffs"`
}

// merchant is the operator side of a row: create, warm up, read, reconcile.
type merchant struct {
	c     *client
	token string
}

// whileBusy calls f again while it answers BUSY, as an operator would retry, for at most
// 20 s: after a fault a dependency may still be coming back (the gateway's zRPC connection
// to a restarted rpc, MySQL behind a restored proxy, a breaker closing again).
func whileBusy(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := f()
		if err == nil || !strings.Contains(err.Error(), "BUSY") || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (m *merchant) create(ctx context.Context, name string, b Burst) (int64, error) {
	start := time.Now().Unix() - 5
	if b.DrawSeconds > 0 {
		start += 4 // the draw's window opens now
	}
	var a activityResp
	err := whileBusy(ctx, func() error {
		_, err := m.c.call(ctx, http.MethodPost, "/v1/admin/activities", m.token, map[string]any{
			"sku_id": 1, "name": name, "stock": b.Stock, "start_time": start, "end_time": start + 3600,
			"per_user_limit": b.Limit, "pay_timeout_seconds": b.PayTimeout, "draw_seconds": b.DrawSeconds,
		}, &a)
		return err
	})
	if err != nil {
		return 0, err
	}
	err = whileBusy(ctx, func() error {
		_, err := m.c.call(ctx, http.MethodPost, fmt.Sprintf("/v1/admin/activities/%d/warmup", a.ActivityID), m.token, nil, nil)
		return err
	})
	if err != nil {
		return 0, err
	}
	return a.ActivityID, nil
}

func (m *merchant) books(ctx context.Context, aid int64) (activityResp, error) {
	var a activityResp
	err := whileBusy(ctx, func() error {
		_, err := m.c.call(ctx, http.MethodGet, fmt.Sprintf("/v1/admin/activities/%d", aid), m.token, nil, &a)
		return err
	})
	return a, err
}

// drain polls reconciliation until it says consistent (true) or bound passes (false, with
// the last answer).
func (m *merchant) drain(ctx context.Context, aid int64, bound time.Duration) (bool, reconcileResp) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var last reconcileResp
	for {
		var r reconcileResp
		if code, err := m.c.call(ctx, http.MethodGet, fmt.Sprintf("/v1/admin/activities/%d/reconcile", aid), m.token, nil, &r); err == nil {
			if last = r; r.Status == "consistent" {
				return true, r
			}
		} else if ctx.Err() == nil {
			last = reconcileResp{Status: "error " + code}
		}
		select {
		case <-ctx.Done():
			return false, last
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// counts are a row's findings.
type counts struct {
	acknowledged int      // reservations answered 200
	oversold     int64    // units sold or locked beyond the stock, worst of the three views
	lost         int      // acknowledged orders (or pays, cancels) MySQL does not have after the drain
	duplicated   int      // extra orders for one (uid, request_id), units over the per-user limit
	violations   []string // why, in words
}

// audit compares what the buyers were told with both books and MySQL's orders.
func audit(ctx context.Context, m *merchant, orders model.SeckillOrderModel, aid int64, b Burst, t *tally) (counts, error) {
	var c counts
	t.mu.Lock()
	defer t.mu.Unlock()
	c.acknowledged = len(t.reserved)

	a, err := m.books(ctx, aid)
	if err != nil {
		return c, fmt.Errorf("read books: %w", err)
	}
	rows, err := orders.FindAuditByActivity(ctx, aid)
	if err != nil {
		return c, fmt.Errorf("read MySQL orders: %w", err)
	}

	over := func(view string, n int64) {
		if n > a.Stock {
			c.violations = append(c.violations, fmt.Sprintf("%s: %d sold+locked of %d", view, n, a.Stock))
			c.oversold = max(c.oversold, n-a.Stock)
		}
	}
	if r := a.Redis; r != nil {
		over("redis book", r.Sold+r.Locked)
		if r.Remaining+r.Locked+r.Sold != a.Stock || r.Remaining < 0 || r.Locked < 0 || r.Sold < 0 {
			c.violations = append(c.violations, fmt.Sprintf("redis book %+v: negative, or not summing to %d", *r, a.Stock))
		}
	}
	over("mysql book", a.DB.Sold+a.DB.Locked)
	if a.DB.Available+a.DB.Locked+a.DB.Sold != a.Stock {
		c.violations = append(c.violations, fmt.Sprintf("mysql book %+v does not sum to %d", a.DB, a.Stock))
	}

	byNo := map[string]*model.OrderAudit{}
	perReq := map[buyerKey]int{}
	held := map[uint64]int64{}
	var heldUnits int64
	for _, o := range rows {
		byNo[o.OrderNo] = o
		perReq[buyerKey{int64(o.Uid), o.RequestId}]++
		if o.Status == "reserved" || o.Status == "paid" {
			held[o.Uid] += int64(o.Quantity)
			heldUnits += int64(o.Quantity)
		}
	}
	over("mysql orders", heldUnits)

	for k, n := range perReq {
		if n > 1 {
			c.duplicated += n - 1
			c.violations = append(c.violations, fmt.Sprintf("uid %d request %s: %d orders", k.uid, k.req, n))
		}
	}
	for uid, q := range held {
		if q > b.Limit {
			c.duplicated += int(q - b.Limit)
			c.violations = append(c.violations, fmt.Sprintf("uid %d holds %d, limit %d", uid, q, b.Limit))
		}
	}
	if t.twoAnswers > 0 {
		c.duplicated += t.twoAnswers
		c.violations = append(c.violations, fmt.Sprintf("%d request ids answered with two order numbers", t.twoAnswers))
	}

	var missing []string
	for _, no := range t.reserved {
		o := byNo[no]
		switch {
		case o == nil:
			c.lost++
			missing = append(missing, no)
		case t.paid[no] && o.Status != "paid":
			c.lost++
			missing = append(missing, no+" (paid, MySQL "+o.Status+")")
		case t.cancelled[no] && o.Status != "cancelled":
			c.lost++
			missing = append(missing, no+" (cancelled, MySQL "+o.Status+")")
		case t.payClosed[no] && o.Status == "paid":
			c.violations = append(c.violations, no+": pay refused ORDER_CLOSED, MySQL says paid")
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		c.violations = append(c.violations, fmt.Sprintf("%d acknowledged not in MySQL as answered, e.g. %s", len(missing), missing[0]))
	}
	return c, nil
}

// newOrderModel reads MySQL directly (around the proxy the services go through).
func newOrderModel(dsn string) model.SeckillOrderModel {
	return model.NewSeckillOrderModel(sqlx.NewMysql(dsn))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
