package stocktest

import (
	"cmp"
	"context"
	"slices"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
)

// OrderNos lists activity aid's orders in Redis (its orders hash, read in HSCAN pages through
// Store.ScanOrders, as they were when the call began), oldest first (by creation, then
// number).
func OrderNos(ctx context.Context, s *stock.Store, aid int64) ([]string, error) {
	sg, err := s.Sight(ctx, aid)
	if err != nil {
		return nil, err
	}
	var orders []domain.Order
	var cursor uint64
	for {
		page, next, err := s.ScanOrders(ctx, sg, cursor, 1000)
		if err != nil {
			return nil, err
		}
		orders = append(orders, page...)
		if cursor = next; cursor == 0 {
			break
		}
	}
	slices.SortFunc(orders, func(a, b domain.Order) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.OrderNo, b.OrderNo))
	})
	nos := make([]string, 0, len(orders))
	for i, o := range orders {
		if i == 0 || o.OrderNo != orders[i-1].OrderNo { // HSCAN may return a field twice
			nos = append(nos, o.OrderNo)
		}
	}
	return nos, nil
}
