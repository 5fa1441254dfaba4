package faults

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/model"
)

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
		if apiclient.CodeOf(err) != apiclient.CodeBusy || time.Now().After(deadline) || ctx.Err() != nil {
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
	var a apiclient.Activity
	err := whileBusy(ctx, func() (err error) {
		a, err = m.c.Create(ctx, m.token, apiclient.NewActivity{
			SkuID: 1, Name: name, Stock: b.Stock, StartTime: start, EndTime: start + 3600,
			PerUserLimit: b.Limit, PayTimeoutSeconds: b.PayTimeout, DrawSeconds: b.DrawSeconds,
		})
		return err
	})
	if err != nil {
		return 0, err
	}
	err = whileBusy(ctx, func() error {
		_, err := m.c.Warmup(ctx, m.token, a.ActivityID)
		return err
	})
	if err != nil {
		return 0, err
	}
	return a.ActivityID, nil
}

func (m *merchant) books(ctx context.Context, aid int64) (apiclient.Activity, error) {
	var a apiclient.Activity
	err := whileBusy(ctx, func() (err error) {
		a, err = m.c.Admin(ctx, m.token, aid)
		return err
	})
	return a, err
}

// drain polls reconciliation until it says consistent (true) or bound passes (false, with
// the last answer).
func (m *merchant) drain(ctx context.Context, aid int64, bound time.Duration) (bool, apiclient.Reconcile) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var last apiclient.Reconcile
	for {
		if r, err := m.c.Reconcile(ctx, m.token, aid); err == nil {
			if last = r; r.Status == "consistent" {
				return true, r
			}
		} else if ctx.Err() == nil {
			last = apiclient.Reconcile{Status: "error " + apiclient.CodeOf(err)}
		}
		select {
		case <-ctx.Done():
			return false, last
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// writerLag waits until the writers' consumer group has committed everything on the events
// topic: lag 0.
func writerLag(ctx context.Context, s *System) ([]string, []string) {
	p, err := kafkax.NewProgress([]string{s.KafkaAddr}, s.invCfg.Relay.Topic, s.invCfg.Reconcile.WriterGroup).
		WithAuth(s.kafkaAdmin())
	if err != nil {
		return []string{err.Error()}, nil
	}
	start := time.Now()
	var lag int64
	for {
		lag, err = groupLag(ctx, p)
		if err == nil && lag == 0 {
			return nil, []string{"writer group lag 0 after " + time.Since(start).Round(100*time.Millisecond).String() + " more"}
		}
		if time.Since(start) > clusterBound || ctx.Err() != nil {
			return []string{fmt.Sprintf("writer group lag %d after %s (%v)", lag, clusterBound, err)}, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func groupLag(ctx context.Context, p *kafkax.Progress) (int64, error) {
	ends, err := p.Ends(ctx)
	if err != nil {
		return 0, err
	}
	parts := make([]int, 0, len(ends))
	for part := range ends {
		parts = append(parts, part)
	}
	done, err := p.Committed(ctx, parts)
	if err != nil {
		return 0, err
	}
	var lag int64
	for part, end := range ends {
		lag += end - max(done[part], 0)
	}
	return lag, nil
}

// counts are a row's findings.
type counts struct {
	acknowledged int      // reservations answered 200
	oversold     int64    // units sold or locked beyond the stock, worst of the three views
	lost         int      // acknowledged orders (or pays, cancels) MySQL does not have after the drain
	duplicated   int      // extra orders for one (uid, request_id), units over the per-user limit
	toldNo       int      // orders MySQL holds for a request whose buyer was finally told no (SOLD_OUT…)
	violations   []string // why, in words
}

// audit compares what the buyers were told with both books and MySQL's orders.
func audit(ctx context.Context, m *merchant, orders model.SeckillOrderModel, aid int64, b Burst, t *tally) (counts,
	error) {
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

	over := c.bookFindings(a)
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

	c.toldNoFindings(perReq, t)
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
		c.violations = append(c.violations, fmt.Sprintf("%d acknowledged not in MySQL as answered, e.g. %s", len(missing),
			missing[0]))
	}
	return c, nil
}

// toldNoFindings counts the orders of requests whose buyer's last answer was a final no: a
// buyer told SOLD_OUT while holding the unit never pays, and the unit is lost to the sale
// until its pay timeout (docs/DESIGN.md "A mark never answers a replay").
func (c *counts) toldNoFindings(perReq map[buyerKey]int, t *tally) {
	var eg string
	for k := range perReq {
		if code, ok := t.refused[k]; ok {
			c.toldNo++
			eg = fmt.Sprintf("uid %d request %s told %s", k.uid, k.req, code)
		}
	}
	if c.toldNo > 0 {
		c.violations = append(c.violations, fmt.Sprintf("%d orders held by buyers told no, e.g. %s", c.toldNo, eg))
	}
}

// bookFindings checks both books of a against its stock and returns the check of a view's
// units sold and locked against the stock.
func (c *counts) bookFindings(a apiclient.Activity) func(view string, n int64) {
	over := func(view string, n int64) {
		if n > a.Stock {
			c.violations = append(c.violations, fmt.Sprintf("%s: %d sold+locked of %d", view, n, a.Stock))
			c.oversold = max(c.oversold, n-a.Stock)
		}
	}
	if r := a.Redis; r != nil {
		over("redis book", r.Sold+r.Locked)
		if r.Remaining+r.Locked+r.Sold != a.Stock || r.Remaining < 0 || r.Locked < 0 || r.Sold < 0 {
			c.violations = append(c.violations, fmt.Sprintf("redis book %+v: negative, or not summing to %d",
				*r, a.Stock))
		}
	}
	over("mysql book", a.DB.Sold+a.DB.Locked)
	if a.DB.Available+a.DB.Locked+a.DB.Sold != a.Stock {
		c.violations = append(c.violations, fmt.Sprintf("mysql book %+v does not sum to %d", a.DB, a.Stock))
	}
	return over
}

// newOrderModel reads MySQL directly (around the proxy the services go through).
func newOrderModel(dsn string) model.SeckillOrderModel {
	return model.NewSeckillOrderModel(sqlx.NewMysql(dsn))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
