package stock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
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
	Warm    bool              // the stock hash exists
	Stock   domain.Activity   // its ActivityID is the activity's when not Warm too
	LastID  string            // the newest outbox entry's id; "" when the outbox is empty
	NowMs   int64             // Redis's clock
	History map[string]string // SaveHistory's last record
	seq     int64             // the stock hash's change count 'seq': ScanOrders puts the orders back to it
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
	histCmd := pipe.HGetAll(ctx, keys.recon(aid))
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, red.Nil) {
		return Sighting{}, err
	}
	m := stockCmd.Val()
	_, warm := m["remaining"]
	seq, _ := strconv.ParseInt(m["seq"], 10, 64)
	if !warm {
		seq = math.MaxInt64 // no change count to put the orders back to: ScanOrders takes them as they are
	}
	sg := Sighting{Warm: warm, Stock: parseStock(aid, m), seq: seq, NowMs: timeCmd.Val().UnixMilli(),
		History: histCmd.Val()}
	if last := lastCmd.Val(); len(last) > 0 {
		sg.LastID = last[0].ID
	}
	return sg, nil
}

// ScanOrders returns about count orders of the sighted activity's orders hash from cursor (HSCAN:
// every order present throughout is returned once the cursor is back at 0; one may come twice),
// as they were at the sighting (by the stock hash's change count then): an order created after
// it is left out, and one changed after it is reserved (every change leaves reserved).
func (a Audit) ScanOrders(ctx context.Context, sg Sighting, cursor uint64, count int64) ([]domain.Order, uint64,
	error) {
	aid, seq := sg.Stock.ActivityID, sg.seq
	var cmd *red.ScanCmd
	err := a.s.rds.PipelinedCtx(ctx, func(p red.Pipeliner) error {
		cmd = p.HScan(ctx, a.s.keys.OrdersHash(aid), cursor, "", count)
		return nil
	})
	if err != nil && !errors.Is(err, red.Nil) {
		return nil, 0, err
	}
	page, next := cmd.Val()
	out := make([]domain.Order, 0, len(page)/2)
	for i := 0; i+1 < len(page); i += 2 { // field, value
		p, err := readOrder(aid, a.s.orderNoOf(aid, page[i]), page[i+1])
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

// SaveHistory replaces the activity's record of unexplained differences (fingerprint -> first
// seen) with seen, kept for ttl.
func (a Audit) SaveHistory(ctx context.Context, aid int64, seen map[string]string, ttl time.Duration) error {
	key := a.s.keys.recon(aid)
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

// SaveReport records activity aid's last comparison report, whose reads began at startedNs
// (unix ns), for ttl.
func (a Audit) SaveReport(ctx context.Context, aid, startedNs int64, report []byte, ttl time.Duration) error {
	return a.s.rds.SetexCtx(ctx, a.s.keys.reconReport(aid), strconv.FormatInt(startedNs, 10)+" "+string(report),
		max(int(ttl/time.Second), 1))
}

// LastReport is activity aid's last comparison report and when its reads began (unix ns); ok
// false when none is kept.
func (a Audit) LastReport(ctx context.Context, aid int64) (startedNs int64, report []byte, ok bool, err error) {
	v, err := a.s.rds.GetCtx(ctx, a.s.keys.reconReport(aid))
	if err != nil || v == "" {
		return 0, nil, false, err
	}
	at, rest, found := strings.Cut(v, " ")
	if startedNs, err = strconv.ParseInt(at, 10, 64); !found || err != nil {
		return 0, nil, false, fmt.Errorf("reconcile report of %d: malformed %.40q", aid, v)
	}
	return startedNs, []byte(rest), true, nil
}
