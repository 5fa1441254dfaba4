package pipelinetest_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	red "github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/devkit/pipelinetest"
	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

var ctx = context.Background()

// quiet drops go-redis's own log lines (a refused dial per attempt while a test has Redis
// down); the errors reach the code under test all the same.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	red.SetLogger(quiet{})
	os.Exit(m.Run())
}

func rid(uid int64, round string) string { return fmt.Sprintf("request-%s-%d", round, uid) }

// flushAll empties the PRIVATE Redis of the pipeline, as a restart without persistence or
// a failover to an empty replica would.
func flushAll(t *testing.T, p *pipelinetest.Pipeline) {
	t.Helper()
	c := red.NewClient(&red.Options{Addr: p.Redis.Addr})
	defer c.Close()
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
}

type sale struct {
	reserved map[int64]*inventoryclient.ReserveResp // uid -> reservation
	paid     map[int64]bool
	cancel   map[int64]bool
}

// sell reserves for uids, pays every payEvery-th and cancels every cancelEvery-th.
func sell(
	t *testing.T,
	p *pipelinetest.Pipeline,
	aid int64,
	s *sale,
	round string,
	uids []int64,
	payEvery, cancelEvery int,
) {
	t.Helper()
	for i, uid := range uids {
		r, err := p.Inv.Reserve(
			ctx,
			&inventoryclient.ReserveReq{ActivityId: aid, Uid: uid, Quantity: 1, RequestId: rid(uid, round)},
		)
		if err != nil {
			t.Fatalf("reserve %d: %v", uid, err)
		}
		s.reserved[uid] = r
		switch {
		case i%payEvery == 0:
			if _, err := p.Inv.Confirm(ctx, &inventoryclient.OrderReq{OrderNo: r.OrderNo, Uid: uid}); err != nil {
				t.Fatalf("pay %d: %v", uid, err)
			}
			s.paid[uid] = true
		case i%cancelEvery == 0:
			if _, err := p.Inv.Release(ctx, &inventoryclient.OrderReq{OrderNo: r.OrderNo, Uid: uid}); err != nil {
				t.Fatalf("cancel %d: %v", uid, err)
			}
			s.cancel[uid] = true
		}
	}
}

func uids(from, n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)
	}
	return out
}

func TestRecoveryAfterRedisLossDrained(t *testing.T) { lossScenario(t, false) }

// The writer is stopped when Redis loses its data: MySQL is behind what Kafka holds.
// The rebuild waits for the writer; until then every caller is BUSY, and no unit is sold
// twice once it restarts.
func TestRecoveryAfterRedisLossWriterBehind(t *testing.T) { lossScenario(t, true) }

func lossScenario(t *testing.T, writerBehind bool) {
	const total = 100
	p := pipelinetest.Start(t, pipelinetest.Options{})
	now := time.Now()
	aid := p.Activity(total, 1, 600, now.Add(-time.Minute), now.Add(time.Hour))
	s := &sale{reserved: map[int64]*inventoryclient.ReserveResp{}, paid: map[int64]bool{}, cancel: map[int64]bool{}}
	sell(t, p, aid, s, "a", uids(1, 20), 3, 5)
	p.Drain(aid, 20*time.Second)
	if writerBehind {
		p.StopWriter()
		sell(t, p, aid, s, "a", uids(21, 10), 2, 7)
		p.OutboxEmpty(aid, 10*time.Second) // on Kafka, not in MySQL
	}
	held := 0
	for uid := range s.reserved {
		if !s.cancel[uid] {
			held++
		}
	}

	flushAll(t, p)

	if writerBehind {
		// Until the writer has consumed what Kafka held, nothing is sold: BUSY, never a
		// reservation made from MySQL's stale counters.
		deadline := time.Now().Add(1500 * time.Millisecond)
		for time.Now().Before(deadline) {
			_, err := p.Inv.Reserve(ctx, &inventoryclient.ReserveReq{ActivityId: aid, Uid: 9000, Quantity: 1,
				RequestId: rid(9000, "early")})
			if c := xerr.FromStatus(err); err == nil || c.Code != xerr.Busy {
				t.Fatalf("reserve during the loss with the writer stopped: %v, want BUSY", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		p.StartWriter()
	}

	ordersSurviveTheLoss(t, p, aid, s)
	// The remaining stock sells exactly once.
	sellsOut(t, p, aid, total, held, 0)
}

// ordersSurviveTheLoss: after the rebuild, paid orders are paid, a reserved one is payable
// with its expire_at, every request id replays its order and the per-user limit counts
// the orders from before the loss.
func ordersSurviveTheLoss(t *testing.T, p *pipelinetest.Pipeline, aid int64, s *sale) {
	t.Helper()
	// Paid orders are still paid (the first read waits out the rebuild).
	for uid := range s.paid {
		o, err := pipelinetest.Retry(t, 30*time.Second, func() (*inventoryclient.GetOrderResp, error) {
			return p.Inv.GetOrder(ctx, &inventoryclient.OrderReq{OrderNo: s.reserved[uid].OrderNo, Uid: uid})
		})
		if err != nil || o.Order.Status != domain.StatePaid {
			t.Fatalf("paid order of %d after the loss: %+v %v", uid, o, err)
		}
	}
	var reservedUID int64
	for uid := range s.reserved {
		if !s.paid[uid] && !s.cancel[uid] {
			reservedUID = uid
			break
		}
	}
	// A reserved order is payable, with its original expire_at.
	o, err := p.Inv.GetOrder(ctx, &inventoryclient.OrderReq{OrderNo: s.reserved[reservedUID].OrderNo, Uid: reservedUID})
	if err != nil || o.Order.Status != domain.StateReserved || o.Order.ExpireAt != s.reserved[reservedUID].ExpireAt {
		t.Fatalf("reserved order after the loss: %+v %v (expire_at was %d)", o, err, s.reserved[reservedUID].ExpireAt)
	}
	pay := &inventoryclient.OrderReq{OrderNo: s.reserved[reservedUID].OrderNo, Uid: reservedUID}
	if _, err := p.Inv.Confirm(ctx, pay); err != nil {
		t.Fatalf("pay a pre-loss reservation: %v", err)
	}
	// A replayed request id returns the original order.
	for uid, r := range s.reserved {
		again, err := p.Inv.Reserve(
			ctx,
			&inventoryclient.ReserveReq{ActivityId: aid, Uid: uid, Quantity: 1, RequestId: rid(uid, "a")},
		)
		if err != nil || again.OrderNo != r.OrderNo || !again.Replay {
			t.Fatalf("replay of %d: %+v %v, want %s", uid, again, err, r.OrderNo)
		}
	}
	// The per-user limit still counts pre-loss orders.
	for uid := range s.reserved {
		if s.cancel[uid] {
			continue
		}
		_, err := p.Inv.Reserve(
			ctx,
			&inventoryclient.ReserveReq{ActivityId: aid, Uid: uid, Quantity: 1, RequestId: rid(uid, "b")},
		)
		if c := xerr.FromStatus(err); c == nil || c.Code != xerr.LimitExceeded {
			t.Fatalf("buyer %d with a new request id after the loss: %v, want LIMIT_EXCEEDED", uid, err)
		}
	}
}

// sellsOut has 300 buyers (uids from 10000; the first one firstUID instead, when not 0)
// reserve concurrently, retrying BUSY, until the activity is sold out: exactly total -
// held must sell, both books must add up to total, the stock hash be of a rebuilt epoch,
// and MySQL hold total live orders.
func sellsOut(t *testing.T, p *pipelinetest.Pipeline, aid int64, total, held int, firstUID int64) {
	t.Helper()
	var sold, soldOut, other atomic.Int64
	var wg sync.WaitGroup
	const buyers = 300
	for i := range buyers {
		uid := int64(10000 + i)
		if i == 0 && firstUID != 0 {
			uid = firstUID
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := pipelinetest.Retry(t, 10*time.Second, func() (*inventoryclient.ReserveResp, error) {
				return p.Inv.Reserve(
					ctx,
					&inventoryclient.ReserveReq{ActivityId: aid, Uid: uid, Quantity: 1, RequestId: rid(uid, "c")},
				)
			})
			switch c := xerr.FromStatus(err); {
			case err == nil && r.OrderNo != "":
				sold.Add(1)
			case c != nil && c.Code == xerr.SoldOut:
				soldOut.Add(1)
			default:
				other.Add(1)
				t.Errorf("buyer %d: %+v %v", uid, r, err)
			}
		}()
	}
	wg.Wait()
	if want := int64(total - held); sold.Load() != want || other.Load() != 0 {
		t.Fatalf("after the loss %d sold, %d sold out, %d other; want exactly %d sold (oversold %d)",
			sold.Load(), soldOut.Load(), other.Load(), want, sold.Load()-want)
	}
	snap, err := p.Store.Stock(ctx, aid)
	if err != nil || snap.Remaining != 0 || snap.Remaining+snap.Locked+snap.Sold != snap.Total ||
		snap.Total != int64(total) {
		t.Fatalf("stock after the sale: %+v %v", snap, err)
	}
	if snap.Epoch < 2 {
		t.Fatalf("epoch %d after a rebuild, want >= 2", snap.Epoch)
	}
	r := p.Drain(aid, 30*time.Second)
	if r.Db.Available != 0 || r.Db.Locked+r.Db.Sold != int64(total) {
		t.Fatalf("mysql after the sale: %+v", r.Db)
	}
	var rows int
	if err := p.DB.DB.QueryRow("SELECT COUNT(*) FROM seckill_order WHERE activity_id = ? AND status IN "+
		"('reserved','paid')", aid).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != total {
		t.Fatalf("%d live orders in MySQL, want %d", rows, total)
	}
}

// TestConcurrentAdjustmentsAllReachMySQL: two activities adjusted concurrently, 300 +1
// adjustments each. Stream entry ids are per activity, so two activities adjusted in the
// same millisecond share an event_id: every adjustment must still be in MySQL (the unique
// key is (activity_id, event_id)).
func TestConcurrentAdjustmentsAllReachMySQL(t *testing.T) {
	p := pipelinetest.Start(t, pipelinetest.Options{})
	now := time.Now()
	ids := []int64{p.Activity(10, 1, 600, now.Add(-time.Minute), now.Add(time.Hour)),
		p.Activity(10, 1, 600, now.Add(-time.Minute), now.Add(time.Hour))}
	const n = 300
	var wg sync.WaitGroup
	for _, aid := range ids {
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range n / 4 {
					if _, err := p.Inv.Adjust(ctx, &inventoryclient.AdjustReq{ActivityId: aid, Delta: 1}); err != nil {
						t.Errorf("adjust %d: %v", aid, err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	for _, aid := range ids {
		r := p.Drain(aid, 30*time.Second)
		var rows, total int64
		if err := p.DB.DB.QueryRow("SELECT COUNT(*) FROM stock_adjustment WHERE activity_id = "+
			"?", aid).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if err := p.DB.DB.QueryRow("SELECT total FROM activity WHERE id = ?", aid).Scan(&total); err != nil {
			t.Fatal(err)
		}
		if rows != n || total != 10+n || r.Db.Available != 10+n {
			t.Fatalf("activity %d: %d adjustments in MySQL, total %d, available %d; want %d, %d, %d",
				aid, rows, total, r.Db.Available, n, 10+n, 10+n)
		}
	}
	var shared int
	if err := p.DB.DB.QueryRow("SELECT COUNT(*) FROM stock_adjustment a JOIN stock_adjustment b " +
		"ON a.event_id = b.event_id AND a.activity_id < b.activity_id").Scan(&shared); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d event ids shared by both activities", shared)
}

// TestOrderNearTheEndOutlivesTheGrace: an order reserved at end - 1 s with a pay timeout
// longer than the grace can be paid after end + grace (the keys live until end + pay
// timeout + grace), and one left unpaid expires in both books.
func TestOrderNearTheEndOutlivesTheGrace(t *testing.T) {
	p := pipelinetest.Start(t, pipelinetest.Options{GraceSecs: 1})
	const payTimeout = 4
	end := time.Now().Add(3 * time.Second).Truncate(time.Second)
	aid := p.Activity(10, 1, payTimeout, time.Now().Add(-time.Minute), end)
	time.Sleep(time.Until(end.Add(-time.Second)))
	var orders []*inventoryclient.ReserveResp
	for uid := int64(1); uid <= 2; uid++ {
		r, err := p.Inv.Reserve(
			ctx,
			&inventoryclient.ReserveReq{ActivityId: aid, Uid: uid, Quantity: 1, RequestId: rid(uid, "end")},
		)
		if err != nil {
			t.Fatalf("reserve at end - 1 s: %v", err)
		}
		orders = append(orders, r)
	}
	// Past end + grace: under the old rule (keys expire at end + grace) they are gone.
	time.Sleep(time.Until(end.Add(2500 * time.Millisecond)))
	if _, err := p.Inv.Confirm(ctx, &inventoryclient.OrderReq{OrderNo: orders[0].OrderNo, Uid: 1}); err != nil {
		t.Fatalf("pay after end + grace, within the pay timeout: %v", err)
	}
	// The unpaid one falls due and the expiry (as the job calls it) releases it.
	time.Sleep(time.Until(time.Unix(orders[1].ExpireAt, 0).Add(1100 * time.Millisecond)))
	ex, err := p.Inv.ExpireDue(ctx, &inventoryclient.ExpireDueReq{ActivityId: aid})
	if err != nil || ex.Expired != 1 || ex.OrderNos[0] != orders[1].OrderNo {
		t.Fatalf("expire after the end: %+v %v", ex, err)
	}
	act, err := p.Inv.ListActive(ctx, &inventoryclient.ActiveReq{})
	if err != nil || len(act.ActivityIds) != 1 || act.ActivityIds[0] != aid {
		t.Fatalf("active after the end, before the last order's due time + grace: %+v %v", act, err)
	}
	p.Drain(aid, 20*time.Second)
	for i, want := range []string{domain.StatePaid, domain.StateExpired} {
		var status string
		if err := p.DB.DB.QueryRow("SELECT status FROM seckill_order WHERE order_no = "+
			"?", orders[i].OrderNo).Scan(&status); err != nil {
			t.Fatal(err)
		}
		if status != want {
			t.Fatalf("order %d in MySQL: %s, want %s", i, status, want)
		}
	}
	var inv struct{ a, l, s int64 }
	if err := p.DB.DB.QueryRow("SELECT available, locked, sold FROM inventory WHERE activity_id = "+
		"?", aid).Scan(&inv.a, &inv.l, &inv.s); err != nil {
		t.Fatal(err)
	}
	if inv.a != 9 || inv.l != 0 || inv.s != 1 {
		t.Fatalf("mysql inventory %+v, want available 9, locked 0, sold 1", inv)
	}
}

// TestRecoveryTimeFor10000Orders measures how long an activity with 10,000 orders takes
// to come back after Redis lost it: from the first call that meets the loss to the first
// that is served again (the rebuild reads MySQL and restores in batches of 500).
func TestRecoveryTimeFor10000Orders(t *testing.T) {
	const n = 10000
	p := pipelinetest.Start(t, pipelinetest.Options{})
	now := time.Now()
	aid := p.Activity(n, 1, 600, now.Add(-time.Minute), now.Add(time.Hour))
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for uid := int64(w + 1); uid <= n; uid += 8 {
				if _, err := stocktest.Reserve(ctx, p.Store, aid, uid, 1, rid(uid, "m")); err != nil {
					t.Errorf("reserve %d: %v", uid, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	p.Drain(aid, 2*time.Minute)
	flushAll(t, p)
	start := time.Now()
	if _, err := pipelinetest.Retry(t, 2*time.Minute, func() (*inventoryclient.GetStockResp, error) {
		return p.Inv.GetStock(ctx, &inventoryclient.GetStockReq{ActivityId: aid})
	}); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	nos, err := stocktest.OrderNos(ctx, p.Store, aid)
	if err != nil || len(nos) != n {
		t.Fatalf("%d orders restored (%v), want %d", len(nos), err, n)
	}
	t.Logf(
		"recovery of an activity with %d orders: %v (loss seen to first answer served)",
		n,
		took.Round(time.Millisecond),
	)
}
