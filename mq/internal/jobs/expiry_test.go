package jobs_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/mq/internal/jobs"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// Unpaid orders with a 2 s pay timeout expire, through the scheduled job at its default
// 1 s interval, within pay_timeout + 5 s of being placed: their stock back in remaining
// and each buyer's limit released. Paid orders never expire.
func TestExpiryReleasesUnpaidOrdersWithinTheBound(t *testing.T) {
	f := newFixture(t, false)
	const buyers, payTimeout = 20, 2
	aid := f.live(buyers, 1, payTimeout)

	c := testConf(t)
	c.Expiry.Enabled, c.Expiry.Batch = true, 7 // default Interval 1s, MaxRounds 50
	svcs := jobs.New(c, f.inv, f.db.Conn, nil)
	if len(svcs) != 1 {
		t.Fatalf("%d jobs for an expiry-only config", len(svcs))
	}
	f.run(svcs[0].Start, svcs[0].Stop)

	placed := map[string]time.Time{}
	paid := map[string]bool{}
	for uid := int64(1); uid <= buyers; uid++ {
		no := f.reserve(aid, uid)
		placed[no] = time.Now()
		if uid%2 == 0 {
			if _, err := f.inv.Confirm(ctx, &inventoryclient.OrderReq{OrderNo: no, Uid: uid}); err != nil {
				t.Fatal(err)
			}
			paid[no] = true
		}
	}
	// Poll every order until it is expired; note when it was first seen expired.
	expiredAt := map[string]time.Time{}
	f.waitFor("every unpaid order to expire", (payTimeout+10)*time.Second, func() bool {
		for no := range placed {
			if _, done := expiredAt[no]; !done && !paid[no] && f.state(no) == domain.StateExpired {
				expiredAt[no] = time.Now()
			}
		}
		return len(expiredAt) == buyers/2
	})
	bound := (payTimeout + 5) * time.Second
	for no, at := range expiredAt {
		if late := at.Sub(placed[no]); late > bound {
			t.Errorf("order %s expired %v after it was placed, bound %v", no, late, bound)
		}
	}
	// Paid orders stay paid, also well past their deadline.
	time.Sleep(1500 * time.Millisecond)
	for no := range paid {
		if s := f.state(no); s != domain.StatePaid {
			t.Errorf("paid order %s is %s", no, s)
		}
	}
	c0 := f.env.CheckInvariant(aid)
	if c0.Remaining != buyers/2 || c0.Sold != buyers/2 || c0.Locked != 0 {
		t.Fatalf("counters after expiry: %+v, want remaining %d sold %d locked 0", c0, buyers/2, buyers/2)
	}
	if n := f.env.OutboxCount(aid)[event.Expired]; n != buyers/2 {
		t.Fatalf("%d expired events in the outbox, want %d", n, buyers/2)
	}
	// The limit is released: a buyer whose order expired can buy again; a payer cannot.
	if _, err := f.inv.Reserve(ctx, &inventoryclient.ReserveReq{ActivityId: aid, Uid: 1, Quantity: 1,
		RequestId: "again-0000001"}); err != nil {
		t.Fatalf("buyer 1 after expiry: %v", err)
	}
	_, err := f.inv.Reserve(ctx, &inventoryclient.ReserveReq{ActivityId: aid, Uid: 2, Quantity: 1,
		RequestId: "again-0000002"})
	if xerr.FromStatus(err).Code != xerr.LimitExceeded {
		t.Fatalf("buyer 2 (paid) again: %v, want LIMIT_EXCEEDED", err)
	}
}

// 200 orders, pays landing around their deadline while two expiry jobs run at once: each
// order ends in exactly one terminal state, each expired order was released by exactly
// one job call, the outbox holds exactly one terminal event per order, and the counters
// balance.
func TestPayRacingTwoExpiryJobs(t *testing.T) {
	f := newFixture(t, false)
	const n, payTimeout = 200, 2
	aid := f.live(n, 1, payTimeout)
	nos := make([]string, n)
	var deadline time.Time
	for i := range nos {
		nos[i] = f.reserve(aid, int64(i+1))
		if o, err := f.env.Store.Order(ctx, nos[i]); err == nil && deadline.IsZero() {
			deadline = time.UnixMilli(o.ExpireAt)
		}
	}

	r := &payRace{startGate: make(chan struct{}), stopJobs: make(chan struct{})}
	r.runJobs(t, f)
	pays := r.startPays(f, nos, deadline)
	close(r.startGate)
	pays.Wait()
	// Let the jobs sweep whatever is still due, then stop them.
	f.waitFor("no order left reserved", 10*time.Second, func() bool {
		c, err := f.env.Store.Stock(ctx, aid)
		return err == nil && c.Locked == 0 // a failed read is no answer, not zero locked
	})
	close(r.stopJobs)
	r.wg.Wait()
	if err := errors.Join(r.errs...); err != nil {
		t.Fatal(err)
	}
	paidOK, paidClose, released := &r.paidOK, &r.paidClose, &r.released

	states := map[string]int{}
	for _, no := range nos {
		states[f.state(no)]++
	}
	checkOneTerminalEvent(t, f, aid, nos)
	rel := released[0].Load() + released[1].Load()
	t.Logf("paid %d, pay refused (closed) %d, expired %d (job A %d, job B %d)", paidOK.Load(), paidClose.Load(),
		states[domain.StateExpired], released[0].Load(), released[1].Load())
	switch {
	case states[domain.StatePaid]+states[domain.StateExpired] != n:
		t.Fatalf("states %v: every order must be paid or expired", states)
	case int64(states[domain.StatePaid]) != paidOK.Load() || int64(states[domain.StateExpired]) != paidClose.Load():
		t.Fatalf("states %v, but %d pays succeeded and %d were refused", states, paidOK.Load(), paidClose.Load())
	case rel != int64(states[domain.StateExpired]):
		t.Fatalf("the two jobs reported %d releases for %d expired orders", rel, states[domain.StateExpired])
	}
	c := f.env.CheckInvariant(aid)
	if c.Sold != paidOK.Load() || c.Remaining != int64(n)-paidOK.Load() {
		t.Fatalf("counters %+v after %d pays", c, paidOK.Load())
	}
}

// payRace is what TestPayRacingTwoExpiryJobs's expiry jobs and pays share.
type payRace struct {
	wg                  sync.WaitGroup // the jobs
	startGate, stopJobs chan struct{}
	paidOK, paidClose   atomic.Int64
	released            [2]atomic.Int64
	mu                  sync.Mutex
	errs                []error
}

func (r *payRace) fail(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

// runJobs starts two expiry jobs, running from startGate until stopJobs.
func (r *payRace) runJobs(t *testing.T, f *fixture) {
	for j := range 2 {
		ec := testConf(t).Expiry
		ec.Batch, ec.MaxRounds = 13, 100
		e := jobs.NewExpiry(ec, f.inv)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			<-r.startGate
			for {
				select {
				case <-r.stopJobs:
					return
				default:
				}
				k, err := e.Run(ctx)
				if err != nil {
					r.fail(fmt.Errorf("expiry job %d: %w", j, err))
				}
				r.released[j].Add(k)
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
}

// startPays starts the pays of nos (order i of buyer i+1), from startGate, spread over
// ±300 ms around the deadline of the orders.
func (r *payRace) startPays(f *fixture, nos []string, deadline time.Time) *sync.WaitGroup {
	var pays sync.WaitGroup
	for i, no := range nos {
		pays.Add(1)
		at := deadline.Add(time.Duration(rand.IntN(600)-300) * time.Millisecond)
		go func() {
			defer pays.Done()
			<-r.startGate
			time.Sleep(time.Until(at))
			_, err := f.inv.Confirm(ctx, &inventoryclient.OrderReq{OrderNo: no, Uid: int64(i + 1)})
			switch c := xerr.FromStatus(err); {
			case err == nil:
				r.paidOK.Add(1)
			case c.Code == xerr.OrderClosed:
				r.paidClose.Add(1)
			default:
				r.fail(err)
			}
		}()
	}
	return &pays
}

// checkOneTerminalEvent checks that activity aid's outbox holds exactly one terminal event
// of each order of nos.
func checkOneTerminalEvent(t *testing.T, f *fixture, aid int64, nos []string) {
	t.Helper()
	outbox := f.env.Outbox(aid)
	terminal := map[string]int{}
	for _, ev := range outbox {
		if ev.Type == event.Paid || ev.Type == event.Expired {
			terminal[ev.OrderNo]++
		}
	}
	for _, no := range nos {
		if terminal[no] != 1 {
			t.Errorf("order %s has %d terminal events", no, terminal[no])
		}
	}
}
