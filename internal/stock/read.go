package stock

import (
	"context"
	"strconv"

	"github.com/seckill/seckill/internal/xerr"
)

// Snapshot is the stock hash as read.
type Snapshot = Meta

// Counters returns the stock numbers of m.
func (m Meta) Counters() Counters {
	return Counters{Total: m.Total, Remaining: m.Remaining, Locked: m.Locked, Sold: m.Sold}
}

// Stock reads an activity's stock hash; ErrNotWarm when absent.
func (s *Store) Stock(ctx context.Context, aid int64) (Snapshot, error) {
	m, err := s.rds.HgetallCtx(ctx, s.keys.Stock(aid))
	if err != nil {
		return Snapshot{}, dep(err)
	}
	if _, ok := m["remaining"]; !ok {
		return Snapshot{}, ErrNotWarm
	}
	return parseStock(aid, m), nil
}

// parseStock reads a stock hash's fields (absent ones are 0).
func parseStock(aid int64, m map[string]string) Snapshot {
	n := func(f string) int64 { v, _ := strconv.ParseInt(m[f], 10, 64); return v }
	return Snapshot{ActivityID: aid, SkuID: n("sku"), Name: m["name"], Start: n("start"), End: n("end"),
		Limit: n("limit"), PayTimeout: n("ttl"), ExpireAt: n("exp"), Total: n("total"),
		Remaining: n("remaining"), Locked: n("locked"), Sold: n("sold"), Epoch: n("epoch"),
		DrawAt: n("draw_at"), Drawn: m["drawn"] == "1"}
}

// Order is an order as Redis holds it.
type Order struct {
	OrderNo    string
	ActivityID int64
	UID        int64
	Quantity   int64
	State      string
	ExpireAt   int64 // ms
	CreatedAt  int64 // ms
	RequestID  string
}

// Order reads an order; xerr.ErrOrderNotFound when Redis does not hold it.
func (s *Store) Order(ctx context.Context, orderNo string) (Order, error) {
	aid, err := s.CheckOrderNo(orderNo)
	if err != nil {
		return Order{}, err
	}
	m, err := s.rds.HgetallCtx(ctx, s.keys.Order(aid, orderNo))
	if err != nil {
		return Order{}, dep(err)
	}
	if _, ok := m["state"]; !ok {
		return Order{}, xerr.ErrOrderNotFound
	}
	n := func(f string) int64 { v, _ := strconv.ParseInt(m[f], 10, 64); return v }
	return Order{OrderNo: orderNo, ActivityID: aid, UID: n("uid"), Quantity: n("qty"), State: m["state"],
		ExpireAt: n("expire_at"), CreatedAt: n("created_at"), RequestID: m["request_id"]}, nil
}

// OrderNos lists an activity's orders (the orders zset), oldest first.
func (s *Store) OrderNos(ctx context.Context, aid int64) ([]string, error) {
	nos, err := s.rds.ZrangeCtx(ctx, s.keys.Orders(aid), 0, -1)
	return nos, dep(err)
}
