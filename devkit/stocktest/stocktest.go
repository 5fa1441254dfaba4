// Package stocktest has the helpers every inventory test uses: a warm activity on a
// test Redis, the stock invariant, and the outbox audit.
package stocktest

import (
	"context"
	"fmt"
	"testing"
	"time"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/stock"
)

// Env is a Store on a fresh key prefix of the test Redis.
type Env struct {
	T     testing.TB
	Redis *redis.Redis
	Keys  stock.Keys
	Store *stock.Store
	Raw   *red.Client // plain client for the reads go-zero's wrapper lacks (XRANGE, TYPE)
}

// New returns an Env with the scripts loaded, its Store built with opts; every key it makes is
// removed after the test.
func New(t testing.TB, opts ...stock.Option) *Env {
	t.Helper()
	rds, keys := testenv.Redis(t)
	st := stock.NewStore(rds, keys, opts...)
	if err := st.LoadScripts(context.Background()); err != nil {
		t.Fatal(err)
	}
	raw := red.NewClient(&red.Options{Addr: testenv.RedisAddr(), DisableIdentity: true})
	t.Cleanup(func() { _ = raw.Close() })
	return &Env{T: t, Redis: rds, Keys: keys, Store: st, Raw: raw}
}

// Spec describes a test activity; zero fields get defaults (live now, 1 per user, 900 s).
type Spec struct {
	ID, Total, Limit, PayTimeout int64
	Start, End                   time.Time
	DrawAt                       time.Time // the opening draw (zero: none)
	Epoch                        int64     // the stock hash's epoch (inventory.epoch)
}

// Warm creates a live activity in Redis and returns its id.
func (e *Env) Warm(s Spec) int64 {
	e.T.Helper()
	if s.ID == 0 {
		s.ID = time.Now().UnixNano()%1_000_000_000 + 1
	}
	if s.Limit == 0 {
		s.Limit = 1
	}
	if s.PayTimeout == 0 {
		s.PayTimeout = 900
	}
	if s.Start.IsZero() {
		s.Start = time.Now().Add(-time.Minute)
	}
	if s.End.IsZero() {
		s.End = time.Now().Add(time.Hour)
	}
	created, _, err := e.Store.Warmup(context.Background(), domain.Activity{ActivityID: s.ID, SkuID: 7,
		Name: "test", Counters: domain.Counters{Total: s.Total, Remaining: s.Total}, Start: s.Start.Unix(), End: s.End.Unix(),
		Limit: s.Limit, PayTimeout: s.PayTimeout, ExpireAt: s.End.Unix() + 3600, DrawAt: drawAt(s.DrawAt),
		Epoch: s.Epoch})
	if err != nil || !created {
		e.T.Fatalf("warm activity %d: created=%v err=%v", s.ID, created, err)
	}
	e.T.Cleanup(func() { e.CheckInvariant(s.ID) })
	return s.ID
}

// CheckInvariant fails the test unless remaining + locked + sold == total with none
// negative, and the locked count equals the quantity of orders still reserved.
func (e *Env) CheckInvariant(aid int64) domain.Counters {
	e.T.Helper()
	ctx := context.Background()
	snap, err := e.Store.Stock(ctx, aid)
	if err != nil {
		e.T.Errorf("invariant: read stock of %d: %v", aid, err)
		return domain.Counters{}
	}
	c := snap.Counters
	if c.Remaining < 0 || c.Locked < 0 || c.Sold < 0 || c.Remaining+c.Locked+c.Sold != c.Total {
		e.T.Errorf("invariant broken for activity %d: %+v", aid, c)
	}
	var reserved, paid int64
	nos, err := OrderNos(ctx, e.Store, aid)
	if err != nil {
		e.T.Errorf("invariant: orders: %v", err)
	}
	for _, no := range nos {
		o, err := e.Store.Order(ctx, no)
		if err != nil {
			e.T.Errorf("invariant: order %s: %v", no, err)
			continue
		}
		switch o.State {
		case domain.StateReserved:
			reserved += o.Quantity
		case domain.StatePaid:
			paid += o.Quantity
		}
	}
	if reserved != c.Locked || paid != c.Sold {
		e.T.Errorf("invariant: orders hold reserved=%d paid=%d but counters say locked=%d sold=%d",
			reserved, paid, c.Locked, c.Sold)
	}
	return c
}

// Outbox returns the activity's outbox events in order (a batch entry's in its order).
func (e *Env) Outbox(aid int64) []event.Event {
	e.T.Helper()
	msgs, err := e.Raw.XRange(context.Background(), e.Keys.Events(aid), "-", "+").Result()
	if err != nil {
		e.T.Fatalf("outbox: %v", err)
	}
	out := make([]event.Event, 0, len(msgs))
	for _, m := range msgs {
		evs, err := event.FromEntry(m.ID, m.Values) // a reserve batch's entry holds several
		if err != nil {
			e.T.Fatalf("outbox entry: %v", err)
		}
		out = append(out, evs...)
	}
	return out
}

// OutboxCount counts the activity's outbox events by type.
func (e *Env) OutboxCount(aid int64) map[event.Type]int {
	counts := map[event.Type]int{}
	for _, ev := range e.Outbox(aid) {
		counts[ev.Type]++
	}
	return counts
}

// Dump returns every key under the Env's prefix with a rendering of its value, to prove
// that a rejected call changed nothing.
func (e *Env) Dump() map[string]string {
	e.T.Helper()
	ctx := context.Background()
	out := map[string]string{}
	var cursor uint64
	for {
		keys, next, err := e.Redis.ScanCtx(ctx, cursor, e.Keys.Prefix+"*", 1000)
		if err != nil {
			e.T.Fatal(err)
		}
		for _, k := range keys {
			typ, _ := e.Raw.Type(ctx, k).Result()
			var v any
			switch typ {
			case "hash":
				v, _ = e.Redis.HgetallCtx(ctx, k)
			case "string":
				v, _ = e.Redis.GetCtx(ctx, k)
			case "zset":
				v, _ = e.Redis.ZrangeWithScoresCtx(ctx, k, 0, -1)
			case "stream":
				v, _ = e.Raw.XRange(ctx, k, "-", "+").Result()
			}
			ttl, _ := e.Raw.TTL(ctx, k).Result()
			out[k] = fmt.Sprintf("%s %v ttl>0:%v", typ, v, ttl > 0)
		}
		if cursor = next; cursor == 0 {
			return out
		}
	}
}

func drawAt(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// Reserve reserves qty for uid under requestID as production does: a ReserveBatch of one item
// (no sell-by), its answer or refusal.
func Reserve(ctx context.Context, s *stock.Store, aid, uid, qty int64, requestID string) (domain.Reservation, error) {
	res, err := s.ReserveBatch(ctx, aid, []domain.ReserveItem{{UID: uid, Qty: qty, RequestID: requestID}}, time.Time{})
	if err != nil {
		return domain.Reservation{}, err
	}
	return res[0].Reservation, res[0].Err
}
