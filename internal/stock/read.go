package stock

import (
	"context"
	"errors"
	"strconv"

	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
)

// Stock reads an activity's stock hash; ErrNotWarm when absent.
func (s *Store) Stock(ctx context.Context, aid int64) (domain.Activity, error) {
	m, err := s.rds.HgetallCtx(ctx, s.keys.Stock(aid))
	if err != nil {
		return domain.Activity{}, dep(err)
	}
	if _, ok := m["remaining"]; !ok {
		return domain.Activity{}, ErrNotWarm
	}
	return parseStock(aid, m), nil
}

// parseStock reads a stock hash's fields (absent ones are 0).
func parseStock(aid int64, m map[string]string) domain.Activity {
	n := func(f string) int64 { v, _ := strconv.ParseInt(m[f], 10, 64); return v }
	return domain.Activity{ActivityID: aid, SkuID: n("sku"), Name: m["name"], Start: n("start"), End: n("end"),
		Limit: n("limit"), PayTimeout: n("ttl"), ExpireAt: n("exp"), Counters: domain.Counters{Total: n("total"),
			Remaining: n("remaining"), Locked: n("locked"), Sold: n("sold")}, Epoch: n("epoch"),
		DrawAt: n("draw_at"), Drawn: m["drawn"] == "1", Price: n("price")}
}

// Order reads an order; xerr.ErrOrderNotFound when Redis does not hold it.
func (s *Store) Order(ctx context.Context, orderNo string) (domain.Order, error) {
	aid, err := s.CheckOrderNo(orderNo)
	if err != nil {
		return domain.Order{}, err
	}
	v, err := s.rds.HgetCtx(ctx, s.keys.OrdersHash(aid), shortNo(orderNo))
	if errors.Is(err, redis.Nil) {
		return domain.Order{}, xerr.ErrOrderNotFound
	}
	if err != nil {
		return domain.Order{}, dep(err)
	}
	p, err := readOrder(aid, orderNo, v)
	return p.Order, err
}

// End moves the warmed activity's end (unix seconds) to end if that is earlier (a merchant
// ended the sale; reserve.lua answers ENDED from then on): moved is false when it was
// already at or before it, or when the activity is not warm (the next warm-up reads MySQL).
func (s *Store) End(ctx context.Context, aid, end int64) (moved bool, err error) {
	if err := domain.CheckActivityID(aid); err != nil {
		return false, err
	}
	res, err := s.run(ctx, endSaleScript, aid, []string{s.keys.Stock(aid)}, argvOf(endSaleArgs{End: end})...)
	if errors.Is(err, ErrNotWarm) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return decoded[doneReply](res).Done == 1, nil
}
