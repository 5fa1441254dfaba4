package stock

import (
	"context"
	"errors"
	"math"
	"strconv"

	red "github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/domain"
)

// A Sighting is an activity's Redis book at one moment (one MULTI): the stock hash, the newest
// outbox entry and Redis's clock. Reconciliation reads the book through it (docs/DESIGN.md,
// "Reconciliation"; it keeps its own records, internal/reconcile), the drawer's start its stock
// and clock.
type Sighting struct {
	Warm   bool            // the stock hash exists
	Stock  domain.Activity // its ActivityID is the activity's when not Warm too
	LastID string          // the newest outbox entry's id; "" when the outbox is empty
	NowMs  int64           // Redis's clock
	seq    int64           // the stock hash's change count 'seq': ScanOrders puts the orders back to it
}

// Sight reads the activity's Sighting in one MULTI.
func (s *Store) Sight(ctx context.Context, aid int64) (Sighting, error) {
	keys := s.keys
	pipe, err := s.rds.TxPipeline()
	if err != nil {
		return Sighting{}, err
	}
	stockCmd := pipe.HGetAll(ctx, keys.Stock(aid))
	lastCmd := pipe.XRevRangeN(ctx, keys.Events(aid), "+", "-", 1)
	timeCmd := pipe.Time(ctx)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, red.Nil) {
		return Sighting{}, err
	}
	m := stockCmd.Val()
	_, warm := m["remaining"]
	seq, _ := strconv.ParseInt(m["seq"], 10, 64)
	if !warm {
		seq = math.MaxInt64 // no change count to put the orders back to: ScanOrders takes them as they are
	}
	sg := Sighting{Warm: warm, Stock: parseStock(aid, m), seq: seq, NowMs: timeCmd.Val().UnixMilli()}
	if last := lastCmd.Val(); len(last) > 0 {
		sg.LastID = last[0].ID
	}
	return sg, nil
}

// ScanOrders returns about count orders of the sighted activity's orders hash from cursor (HSCAN:
// every order present throughout is returned once the cursor is back at 0; one may come twice),
// as they were at the sighting (by the stock hash's change count then): an order created after
// it is left out, and one changed after it is reserved (every change leaves reserved).
func (s *Store) ScanOrders(ctx context.Context, sg Sighting, cursor uint64, count int64) ([]domain.Order, uint64,
	error) {
	aid, seq := sg.Stock.ActivityID, sg.seq
	var cmd *red.ScanCmd
	err := s.rds.PipelinedCtx(ctx, func(p red.Pipeliner) error {
		cmd = p.HScan(ctx, s.keys.OrdersHash(aid), cursor, "", count)
		return nil
	})
	if err != nil && !errors.Is(err, red.Nil) {
		return nil, 0, err
	}
	page, next := cmd.Val()
	out := make([]domain.Order, 0, len(page)/2)
	for i := 0; i+1 < len(page); i += 2 { // field, value
		p, err := readOrder(aid, s.orderNoOf(aid, page[i]), page[i+1])
		if err != nil {
			return nil, 0, err
		}
		if p.Cseq > seq {
			continue // created after the snapshot
		}
		if p.Useq > seq {
			p.State = domain.StateReserved // changed after the snapshot, from reserved
		}
		out = append(out, p.Order)
	}
	return out, next, nil
}
