package pipelinetest_test

import (
	"strings"
	"testing"
	"time"

	red "github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/devkit/pipelinetest"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// snapshot is every key of one activity as DUMP and PTTL had it.
type snapshot map[string]struct {
	dump string
	pttl time.Duration
}

// activityKeys lists the keys of activity aid in the PRIVATE Redis of the pipeline.
func activityKeys(t *testing.T, p *pipelinetest.Pipeline, c *red.Client, aid int64) []string {
	t.Helper()
	pattern := strings.TrimSuffix(p.Keys.Stock(aid), "stock") + "*"
	var keys []string
	iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

func takeSnapshot(t *testing.T, p *pipelinetest.Pipeline, c *red.Client, aid int64) snapshot {
	t.Helper()
	s := snapshot{}
	for _, k := range activityKeys(t, p, c, aid) {
		d, err := c.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		ttl, err := c.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		s[k] = struct {
			dump string
			pttl time.Duration
		}{d, max(ttl, 0)}
	}
	return s
}

// rollBack puts the activity's keys back as they were in s, as a Redis that lost its
// latest writes would hold them (a failover to a lagging replica, a crash losing the
// AOF's last second), with the keys written since gone.
func rollBack(t *testing.T, p *pipelinetest.Pipeline, c *red.Client, aid int64, s snapshot) {
	t.Helper()
	for _, k := range activityKeys(t, p, c, aid) {
		if _, ok := s[k]; !ok {
			if err := c.Del(ctx, k).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for k, v := range s {
		if err := c.RestoreReplace(ctx, k, v.pttl, v.dump).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPartialRollbackIsRebuilt: Redis comes back holding the activity's stock hash (same
// epoch) but without its last acknowledged writes: 20 reservations, their pays and
// cancels. Those buyers hold orders in MySQL, and their units would be sold again. The
// Acker sees its acknowledged change count above the stock hash's: the next change is
// answered BUSY, not acknowledged, and the activity is rebuilt from MySQL: the lost
// orders are back (paid still paid, replays answer them, the per-user limit counts them),
// and the rest of the stock sells exactly once.
func TestPartialRollbackIsRebuilt(t *testing.T) {
	const total = 100
	p := pipelinetest.Start(t, pipelinetest.Options{})
	c := red.NewClient(&red.Options{Addr: p.Redis.Addr})
	defer c.Close()
	now := time.Now()
	aid := p.Activity(total, 1, 600, now.Add(-time.Minute), now.Add(time.Hour))
	s := &sale{reserved: map[int64]*inventoryclient.ReserveResp{}, paid: map[int64]bool{}, cancel: map[int64]bool{}}
	sell(t, p, aid, s, "a", uids(1, 20), 3, 5)
	p.Drain(aid, 20*time.Second)
	snap := takeSnapshot(t, p, c, aid)
	lost := &sale{reserved: map[int64]*inventoryclient.ReserveResp{}, paid: map[int64]bool{}, cancel: map[int64]bool{}}
	sell(t, p, aid, lost, "a", uids(21, 20), 2, 3) // acknowledged, then lost by Redis
	p.Drain(aid, 20*time.Second)
	held := 0
	for _, sl := range []*sale{s, lost} {
		for uid, r := range sl.reserved {
			s.reserved[uid] = r
			if sl.paid[uid] {
				s.paid[uid] = true
			}
			if sl.cancel[uid] {
				s.cancel[uid] = true
			} else {
				held++
			}
		}
	}

	rollBack(t, p, c, aid, snap)

	// The first change on the rolled-back book is not acknowledged.
	first := &inventoryclient.ReserveReq{ActivityId: aid, Uid: 5000, Quantity: 1, RequestId: rid(5000, "c")}
	_, err := p.Inv.Reserve(ctx, first)
	if code := xerr.FromStatus(err); err == nil || code.Code != xerr.Busy {
		t.Fatalf("first reservation after the rollback: %v, want BUSY", err)
	}
	// The lost orders are back: paid still paid, the others as they were.
	for uid := range lost.reserved {
		o, err := pipelinetest.Retry(t, 30*time.Second, func() (*inventoryclient.GetOrderResp, error) {
			return p.Inv.GetOrder(ctx, &inventoryclient.OrderReq{OrderNo: lost.reserved[uid].OrderNo, Uid: uid})
		})
		want := domain.StateReserved
		switch {
		case lost.paid[uid]:
			want = domain.StatePaid
		case lost.cancel[uid]:
			want = domain.StateCancelled
		}
		if err != nil || o.Order.Status != want {
			t.Fatalf("order of %d lost by the rollback: %+v %v, want %s", uid, o, err, want)
		}
	}
	// Replays answer the original orders, and the per-user limit counts them.
	for uid, r := range s.reserved {
		again, err := pipelinetest.Retry(t, 10*time.Second, func() (*inventoryclient.ReserveResp, error) {
			return p.Inv.Reserve(ctx, &inventoryclient.ReserveReq{ActivityId: aid, Uid: uid, Quantity: 1,
				RequestId: rid(uid, "a")})
		})
		if err != nil || again.OrderNo != r.OrderNo || !again.Replay {
			t.Fatalf("replay of %d: %+v %v, want %s", uid, again, err, r.OrderNo)
		}
		if s.cancel[uid] {
			continue
		}
		_, err = p.Inv.Reserve(ctx, &inventoryclient.ReserveReq{ActivityId: aid, Uid: uid, Quantity: 1,
			RequestId: rid(uid, "b")})
		if c := xerr.FromStatus(err); c == nil || c.Code != xerr.LimitExceeded {
			t.Fatalf("buyer %d with a new request id after the rollback: %v, want LIMIT_EXCEEDED", uid, err)
		}
	}
	// The rest of the stock sells exactly once (buyer 5000's BUSY reservation may have
	// been made in MySQL before the rebuild: it is one of them, once).
	sellsOut(t, p, aid, total, held, 5000)
}
