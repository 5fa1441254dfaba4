package stock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	red "github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/domain"
)

// Audit reads an activity's Redis book for reconciliation and keeps its history of
// differences (docs/DESIGN.md, "Reconciliation").
type Audit struct{ s *Store }

// Audit returns the store's reads for reconciliation.
func (s *Store) Audit() Audit { return Audit{s: s} }

// A Sighting is an activity's Redis book at one moment (one MULTI): the stock hash, the newest
// outbox entry, Redis's clock and the reconciliation history.
type Sighting struct {
	Warm    bool // the stock hash exists
	Stock   Snapshot
	Seq     int64             // the stock hash's change count 'seq'
	LastID  string            // the newest outbox entry's id; "" when the outbox is empty
	NowMs   int64             // Redis's clock
	History map[string]string // SaveHistory's last record
}

// Sight reads the activity's Sighting in one MULTI.
func (a Audit) Sight(ctx context.Context, aid int64) (Sighting, error) {
	keys := a.s.keys
	pipe, err := a.s.rds.TxPipeline()
	if err != nil {
		return Sighting{}, err
	}
	stockCmd := pipe.HGetAll(ctx, keys.Stock(aid))
	lastCmd := pipe.XRevRangeN(ctx, keys.Events(aid), "+", "-", 1)
	timeCmd := pipe.Time(ctx)
	histCmd := pipe.HGetAll(ctx, keys.Recon(aid))
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, red.Nil) {
		return Sighting{}, err
	}
	m := stockCmd.Val()
	_, warm := m["remaining"]
	seq, _ := strconv.ParseInt(m["seq"], 10, 64)
	sg := Sighting{Warm: warm, Stock: parseStock(aid, m), Seq: seq, NowMs: timeCmd.Val().UnixMilli(),
		History: histCmd.Val()}
	if last := lastCmd.Val(); len(last) > 0 {
		sg.LastID = last[0].ID
	}
	return sg, nil
}

// ScanOrders returns about count order numbers of the activity's orders zset from cursor
// (ZSCAN: every member present throughout is returned once the cursor is back at 0).
func (a Audit) ScanOrders(ctx context.Context, aid int64, cursor uint64, count int64) ([]string, uint64, error) {
	var cmd *red.ScanCmd
	err := a.s.rds.PipelinedCtx(ctx, func(p red.Pipeliner) error {
		cmd = p.ZScan(ctx, a.s.keys.Orders(aid), cursor, "", count)
		return nil
	})
	if err != nil && !errors.Is(err, red.Nil) {
		return nil, 0, err
	}
	page, next := cmd.Val()
	nos := make([]string, 0, len(page)/2)
	for i := 0; i+1 < len(page); i += 2 { // member, score
		nos = append(nos, page[i])
	}
	return nos, next, nil
}

// OrdersAt reads the orders nos in one pipeline as they were when the stock hash's seq was
// seq: an order created after it is left out, one changed after it is reserved, and one gone
// is left out.
func (a Audit) OrdersAt(ctx context.Context, aid, seq int64, nos []string) ([]Order, error) {
	if len(nos) == 0 {
		return nil, nil
	}
	cmds := make([]*red.SliceCmd, len(nos))
	err := a.s.rds.PipelinedCtx(ctx, func(p red.Pipeliner) error {
		for i, no := range nos {
			cmds[i] = p.HMGet(ctx, a.s.keys.Order(aid, no),
				"uid", "qty", "state", "expire_at", "request_id", "created_at", "cseq", "useq")
		}
		return nil
	})
	if err != nil && !errors.Is(err, red.Nil) {
		return nil, err
	}
	out := make([]Order, 0, len(nos))
	for i, no := range nos {
		v := cmds[i].Val()
		s := func(j int) string {
			if j < len(v) && v[j] != nil {
				if str, ok := v[j].(string); ok {
					return str
				}
				return fmt.Sprint(v[j])
			}
			return ""
		}
		num := func(j int) int64 { x, _ := strconv.ParseInt(s(j), 10, 64); return x }
		if s(2) == "" {
			continue // listed but gone: expired with the activity's keys
		}
		if num(6) > seq {
			continue // created after the snapshot
		}
		o := Order{OrderNo: no, ActivityID: aid, UID: num(0), Quantity: num(1), State: s(2),
			ExpireAt: num(3), RequestID: s(4), CreatedAt: num(5)}
		if num(7) > seq {
			o.State = domain.StateReserved // changed after the snapshot, from reserved
		}
		out = append(out, o)
	}
	return out, nil
}

// SaveHistory replaces the activity's record of unexplained differences (fingerprint -> first
// seen) with seen, kept for ttl.
func (a Audit) SaveHistory(ctx context.Context, aid int64, seen map[string]string, ttl time.Duration) error {
	key := a.s.keys.Recon(aid)
	pipe, err := a.s.rds.TxPipeline()
	if err != nil {
		return err
	}
	pipe.Del(ctx, key)
	if len(seen) > 0 {
		pipe.HSet(ctx, key, seen)
		pipe.PExpire(ctx, key, ttl)
	}
	_, err = pipe.Exec(ctx)
	return err
}
