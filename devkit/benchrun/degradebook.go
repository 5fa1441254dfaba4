package benchrun

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/devkit/standalone"
	"github.com/seckill/seckill/internal/authtoken"
	"github.com/seckill/seckill/internal/domain"
)

// awaitOrders waits until MySQL holds at least want orders of the activity (more: an
// order made under a BUSY answer).
func (e *degradeEnv) awaitOrders(ctx context.Context, aid, want int64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		orders, err := e.orders.FindAuditByActivity(ctx, aid)
		n := int64(len(orders))
		if err == nil && n >= want {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%d orders in MySQL after %s, want %d (err %v)", n, limit, want, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// book reads the activity's books and orders, and retries the request of every live
// order not answered 200.
func (e *degradeEnv) book(ctx context.Context, sys *standalone.System, aid, stock int64, ans *answers) (
	BookCheck, error) {
	b := BookCheck{Stock: stock, Answered: ans.count()}
	counters, err := e.inventory.FindCounters(ctx, e.conn, aid)
	if err != nil {
		return b, err
	}
	b.Available = int64(counters.Available)
	if b.Mode, err = e.inventory.FindMode(ctx, aid); err != nil {
		return b, err
	}
	orders, err := e.orders.FindAuditByActivity(ctx, aid)
	if err != nil {
		return b, err
	}
	type order struct {
		no, rid string
		uid     int64
	}
	type request struct {
		uid int64
		rid string
	}
	var late []order
	live := map[string]bool{}
	requests := map[request]int{}
	for _, o := range orders {
		k := request{int64(o.Uid), o.RequestId}
		if requests[k]++; requests[k] == 2 {
			b.Dup++ // a request id that made two orders (whatever their states)
		}
		if o.Status != domain.StateReserved && o.Status != domain.StatePaid {
			continue
		}
		b.Live++
		b.LiveUnits += int64(o.Quantity)
		live[o.OrderNo] = true
		if !ans.has(o.OrderNo) {
			late = append(late, order{no: o.OrderNo, rid: o.RequestId, uid: int64(o.Uid)})
		}
	}
	ans.mu.Lock()
	for no := range ans.orders {
		if !live[no] {
			b.Missing++
		}
	}
	ans.mu.Unlock()
	b.Late = int64(len(late))
	for _, o := range late {
		if no, err := replay(ctx, sys, aid, o.uid, o.rid); err != nil {
			b.ReplayErrors = append(b.ReplayErrors, fmt.Sprintf("order %s (uid %d, request %s): %v", o.no, o.uid, o.rid, err))
		} else if no != o.no {
			b.ReplayErrors = append(b.ReplayErrors, fmt.Sprintf("order %s (uid %d, request %s): a retry answered order %s",
				o.no, o.uid, o.rid, no))
		} else {
			b.Replayed++
		}
	}
	return b, nil
}

// replay retries buyer uid's request rid as a client does after a BUSY: the same
// request id again, while the answer is BUSY (for at most 15 s: the gateway's breaker
// may still be shedding right after a burst). It returns the order number answered.
func replay(ctx context.Context, sys *standalone.System, aid, uid int64, rid string) (string, error) {
	token, err := authtoken.Buyer(sys.BuyerSecret, uid, 24*time.Hour)
	if err != nil {
		return "", err
	}
	c := apiclient.New(sys.APIURL, apiclient.Options{Conns: 1, Timeout: requestTimeout})
	defer c.Close()
	body := apiclient.ReserveBody(aid, 1, rid)
	deadline := time.Now().Add(15 * time.Second)
	for {
		r, m, err := c.Reserve(ctx, token, body)
		if m.Code == apiclient.CodeOK && r.OrderNo != "" {
			return r.OrderNo, nil
		}
		if apiclient.StatusOf(err) != http.StatusServiceUnavailable || time.Now().After(deadline) || ctx.Err() != nil {
			return "", fmt.Errorf("a retry answered %s", outcomeOf(m))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// outcomeOf names an answer as devkit/baseline.Outcome does: HTTP_<status>, followed by
// its code word when the body had one; TRANSPORT_ERROR when none came.
func outcomeOf(m apiclient.Meta) string {
	switch {
	case m.Status == 0:
		return apiclient.CodeTransport
	case m.Code == apiclient.CodeOK, m.Code == apiclient.CodeQueued, m.Code == apiclient.CodeBadResponse,
		m.Code == fmt.Sprintf("HTTP_%d", m.Status):
		return fmt.Sprintf("HTTP_%d", m.Status)
	}
	return fmt.Sprintf("HTTP_%d %s", m.Status, m.Code)
}

// createWarm creates an activity of stock units (per-user limit 1, orders unpaid for 10
// minutes: nothing expires during the bench) through the gateway's merchant API and warms
// it into Redis.
func createWarm(ctx context.Context, sys *standalone.System, stock int64) (int64, error) {
	token, err := authtoken.Merchant(sys.MerchantSecret, 1, time.Hour)
	if err != nil {
		return 0, err
	}
	c := apiclient.New(sys.APIURL, apiclient.Options{Conns: 1, Timeout: requestTimeout})
	defer c.Close()
	now := time.Now().Unix()
	// Right after start the gateway may still be connecting to the rpc: retry briefly.
	retry := func(what string, fn func() error) error {
		var err error
		for range 50 {
			if err = fn(); err == nil {
				return nil
			}
			time.Sleep(100 * time.Millisecond)
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	var a apiclient.Activity
	if err := retry("create activity", func() (err error) {
		a, err = c.Create(ctx, token, apiclient.NewActivity{SkuID: 1, Name: "bench degrade", Stock: stock,
			StartTime: now - 1, EndTime: now + 3600, PerUserLimit: 1, PayTimeoutSeconds: 600})
		return err
	}); err != nil {
		return 0, err
	}
	if err := retry(fmt.Sprintf("warm up activity %d", a.ActivityID), func() error {
		_, err := c.Warmup(ctx, token, a.ActivityID)
		return err
	}); err != nil {
		return 0, err
	}
	return a.ActivityID, nil
}
