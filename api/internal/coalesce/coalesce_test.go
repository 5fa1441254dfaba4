package coalesce

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// pending is one ReserveBatch call the fake received, answered by the test.
type pending struct {
	req   *inventoryclient.ReserveBatchReq
	reply chan answer
}

type answer struct {
	resp *inventoryclient.ReserveBatchResp
	err  error
}

// heldInventory hands every call to the test (calls) and blocks it until the test answers.
type heldInventory struct{ calls chan pending }

func newHeld() *heldInventory { return &heldInventory{calls: make(chan pending, 64)} }

func (f *heldInventory) ReserveBatch(ctx context.Context, in *inventoryclient.ReserveBatchReq,
	_ ...grpc.CallOption) (*inventoryclient.ReserveBatchResp, error) {
	p := pending{req: in, reply: make(chan answer, 1)}
	f.calls <- p
	select {
	case a := <-p.reply:
		return a.resp, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// next is the next call the fake received.
func (f *heldInventory) next(t *testing.T) pending {
	t.Helper()
	select {
	case p := <-f.calls:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("no ReserveBatch call")
		return pending{}
	}
}

// none checks that no further call was made.
func (f *heldInventory) none(t *testing.T) {
	t.Helper()
	select {
	case p := <-f.calls:
		t.Fatalf("unexpected call with %v", requestIDs(p.req))
	default:
	}
}

// ok answers every item with a reservation whose order number is "o-" + its request id.
func (p pending) ok() {
	out := &inventoryclient.ReserveBatchResp{}
	for _, it := range p.req.Items {
		out.Results = append(out.Results, &inventoryclient.ReserveResult{Reservation: &inventoryclient.ReserveResp{
			OrderNo: "o-" + it.RequestId, Quantity: it.Quantity}})
	}
	p.reply <- answer{resp: out}
}

func requestIDs(req *inventoryclient.ReserveBatchReq) []string {
	var ids []string
	for _, it := range req.Items {
		ids = append(ids, it.RequestId)
	}
	return ids
}

type outcome struct {
	res *inventoryclient.ReserveResp
	err error
}

// reserve starts one caller of request id rid and returns where its answer arrives.
func reserve(ctx context.Context, c *Coalescer, aid int64, rid string) chan outcome {
	out := make(chan outcome, 1)
	go func() {
		res, err := c.Reserve(ctx, aid, &inventoryclient.ReserveItem{Uid: 1, Quantity: 1, RequestId: rid})
		out <- outcome{res, err}
	}()
	return out
}

func wait(t *testing.T, ch chan outcome) outcome {
	t.Helper()
	return within(t, ch, "no answer")
}

// within is what ch receives within 10 s; failing that, the test fails with why.
func within[T any](t *testing.T, ch <-chan T, why string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal(why)
		var zero T
		return zero
	}
}

// queued is how many reservations wait in aid's queue (sent ones excluded).
func queueLen(c *Coalescer, aid int64) int {
	c.group.mu.Lock()
	defer c.group.mu.Unlock()
	if q := c.group.queues[aid]; q != nil {
		return len(q.waiting)
	}
	return 0
}

// waitQueued waits until n reservations wait in aid's queue.
func waitQueued(t *testing.T, c *Coalescer, aid int64, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); queueLen(c, aid) != n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d queued, want %d", queueLen(c, aid), n)
		}
	}
}

// waitIdle waits until the coalescer holds no activity (every queue dropped).
func waitIdle(t *testing.T, c *Coalescer) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		c.group.mu.Lock()
		n := len(c.group.queues)
		c.group.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d activities still held", n)
		}
	}
}

func expectOrder(t *testing.T, o outcome, rid string) {
	t.Helper()
	if o.err != nil || o.res == nil || o.res.OrderNo != "o-"+rid {
		t.Fatalf("request %s: got %+v, %v; want order o-%s", rid, o.res, o.err, rid)
	}
}

// At low load a reservation is a batch of one and waits for nothing; an idle activity's
// queue is dropped.
func TestLowLoadBatchOfOne(t *testing.T) {
	inv := newHeld()
	c := New(Conf{InFlight: 2, MaxBatch: 128}, inv)
	for i := range 3 {
		rid := fmt.Sprintf("single-%d", i)
		ch := reserve(context.Background(), c, 7, rid)
		p := inv.next(t)
		if p.req.ActivityId != 7 || !slices.Equal(requestIDs(p.req), []string{rid}) {
			t.Fatalf("call %d: activity %d items %v, want 7 [%s]", i, p.req.ActivityId, requestIDs(p.req), rid)
		}
		p.ok()
		expectOrder(t, wait(t, ch), rid)
		waitIdle(t, c)
	}
	inv.none(t)
}

// While InFlight calls are out, what queues goes out as one batch per free sender, in arrival
// order, at most MaxBatch at a time.
func TestQueuedWhileInFlightGoesAsOneBatch(t *testing.T) {
	inv := newHeld()
	c := New(Conf{InFlight: 2, MaxBatch: 4}, inv)
	const aid = 3
	answers := map[string]chan outcome{}
	send := func(rid string) { answers[rid] = reserve(context.Background(), c, aid, rid) }

	send("a")
	first := inv.next(t)
	send("b")
	second := inv.next(t)
	// Both senders are busy: the next ten queue, one after another.
	var rest []string
	for i := range 10 {
		rid := fmt.Sprintf("q%02d", i)
		send(rid)
		waitQueued(t, c, aid, i+1)
		rest = append(rest, rid)
	}
	inv.none(t)

	first.ok()
	expectOrder(t, wait(t, answers["a"]), "a")
	delete(answers, "a")
	third := inv.next(t) // the freed sender takes the head of the queue
	if got := requestIDs(third.req); !slices.Equal(got, rest[:4]) {
		t.Fatalf("third batch %v, want %v", got, rest[:4])
	}
	second.ok()
	fourth := inv.next(t)
	if got := requestIDs(fourth.req); !slices.Equal(got, rest[4:8]) {
		t.Fatalf("fourth batch %v, want %v", got, rest[4:8])
	}
	inv.none(t) // still two in flight
	third.ok()
	fifth := inv.next(t)
	if got := requestIDs(fifth.req); !slices.Equal(got, rest[8:]) {
		t.Fatalf("fifth batch %v, want %v", got, rest[8:])
	}
	fourth.ok()
	fifth.ok()
	for rid, ch := range answers {
		expectOrder(t, wait(t, ch), rid)
	}
	waitIdle(t, c)
	inv.none(t)
}

// A queued reservation whose deadline passes is answered BUSY and never sent; the ones
// queued with it still go.
func TestDeadlinePassesWhileQueued(t *testing.T) {
	inv := newHeld()
	c := New(Conf{InFlight: 1, MaxBatch: 128}, inv)
	const aid = 5
	held := reserve(context.Background(), c, aid, "held")
	first := inv.next(t)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	late := reserve(ctx, c, aid, "late")
	waitQueued(t, c, aid, 1)
	kept := reserve(context.Background(), c, aid, "kept")
	if o := wait(t, late); xerr.CodeOf(o.err) != xerr.Busy || o.res != nil {
		t.Fatalf("expired while queued: %+v, %v; want BUSY", o.res, o.err)
	}
	waitQueued(t, c, aid, 2) // "late" (abandoned) and "kept"
	first.ok()
	expectOrder(t, wait(t, held), "held")
	next := inv.next(t)
	if got := requestIDs(next.req); !slices.Equal(got, []string{"kept"}) {
		t.Fatalf("sent %v, want only [kept]", got)
	}
	next.ok()
	expectOrder(t, wait(t, kept), "kept")
	waitIdle(t, c)
	inv.none(t)
}

// lapsedCtx has passed its deadline but its Done channel never closes: only the sender,
// when it takes the reservation, can see that.
type lapsedCtx struct{ context.Context }

func (lapsedCtx) Err() error { return context.DeadlineExceeded }

// A sender that finds a queued reservation's deadline passed answers it BUSY, unsent.
func TestSenderDropsLapsedReservation(t *testing.T) {
	inv := newHeld()
	c := New(Conf{InFlight: 1, MaxBatch: 128}, inv)
	const aid = 6
	held := reserve(context.Background(), c, aid, "held")
	first := inv.next(t)
	lapsedAnswer := make(chan outcome, 1)
	lapsed := &lapsedCtx{context.Background()}
	go func() {
		// Queued as a live reservation (Err is asked only after the first check).
		cl := &call[*inventoryclient.ReserveItem, *inventoryclient.ReserveResult]{ctx: lapsed,
			item:  &inventoryclient.ReserveItem{Uid: 2, Quantity: 1, RequestId: "lapsed"},
			since: time.Now(), done: make(chan result[*inventoryclient.ReserveResult], 1)}
		if c.group.enqueue(aid, cl) {
			go c.group.run(aid)
		}
		r := <-cl.done
		if r.err != nil {
			lapsedAnswer <- outcome{nil, r.err}
			return
		}
		res, err := itemResult(r.res)
		lapsedAnswer <- outcome{res, err}
	}()
	waitQueued(t, c, aid, 1)
	kept := reserve(context.Background(), c, aid, "kept")
	waitQueued(t, c, aid, 2)
	first.ok()
	expectOrder(t, wait(t, held), "held")
	next := inv.next(t)
	if got := requestIDs(next.req); !slices.Equal(got, []string{"kept"}) {
		t.Fatalf("sent %v, want only [kept]", got)
	}
	if o := wait(t, lapsedAnswer); xerr.CodeOf(o.err) != xerr.Busy {
		t.Fatalf("lapsed: %+v, %v; want BUSY", o.res, o.err)
	}
	next.ok()
	expectOrder(t, wait(t, kept), "kept")
	waitIdle(t, c)
}

// Each item's own answer reaches its own caller, code word and message intact.
func TestItemErrorsReachTheirCallers(t *testing.T) {
	inv := newHeld()
	c := New(Conf{InFlight: 1, MaxBatch: 128}, inv)
	const aid = 9
	held := reserve(context.Background(), c, aid, "held")
	first := inv.next(t)
	want := []*inventoryclient.ReserveResult{
		{Reservation: &inventoryclient.ReserveResp{OrderNo: "o-0", Remaining: 4}},
		{Code: string(xerr.SoldOut), Msg: "sold out"},
		{Reservation: &inventoryclient.ReserveResp{OrderNo: "o-2", Remaining: 3}},
		{Code: string(xerr.LimitExceeded), Msg: "per-user limit exceeded"},
		{Code: string(xerr.NotStarted), Msg: "the activity has not started"},
		{}, // neither: a broken answer
	}
	var answers []chan outcome
	for i := range want {
		answers = append(answers, reserve(context.Background(), c, aid, fmt.Sprintf("r%d", i)))
		waitQueued(t, c, aid, i+1)
	}
	first.ok()
	wait(t, held)
	p := inv.next(t)
	if len(p.req.Items) != len(want) {
		t.Fatalf("batch of %d, want %d", len(p.req.Items), len(want))
	}
	p.reply <- answer{resp: &inventoryclient.ReserveBatchResp{Results: want}}
	for i, w := range want {
		o := wait(t, answers[i])
		switch {
		case w.Reservation != nil:
			if o.err != nil || o.res.OrderNo != w.Reservation.OrderNo || o.res.Remaining != w.Reservation.Remaining {
				t.Errorf("item %d: %+v, %v; want %+v", i, o.res, o.err, w.Reservation)
			}
		case w.Code != "":
			var e *xerr.Error
			if !errors.As(o.err, &e) || e.Code != xerr.Code(w.Code) || e.Msg != w.Msg || o.res != nil {
				t.Errorf("item %d: %+v, %v; want %s: %s", i, o.res, o.err, w.Code, w.Msg)
			}
		default:
			if xerr.CodeOf(o.err) != xerr.Internal {
				t.Errorf("item %d: %+v, %v; want INTERNAL", i, o.res, o.err)
			}
		}
	}
}

// A call that fails as a whole answers every caller of the batch: BUSY for a call that got no
// answer, the service's code word otherwise, INTERNAL for an answer of the wrong length.
func TestBatchFailureReachesEveryCaller(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func(p pending)
		want xerr.Code
	}{
		{"unavailable", func(p pending) { p.reply <- answer{err: status.Error(codes.Unavailable, "down")} }, xerr.Busy},
		{"code word", func(p pending) { p.reply <- answer{err: xerr.ToStatus(xerr.ErrActivityNotFound)} },
			xerr.ActivityNotFound},
		{"short answer", func(p pending) {
			p.reply <- answer{resp: &inventoryclient.ReserveBatchResp{Results: []*inventoryclient.ReserveResult{
				{Reservation: &inventoryclient.ReserveResp{OrderNo: "o-x"}}}}}
		}, xerr.Internal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := newHeld()
			c := New(Conf{InFlight: 1, MaxBatch: 128}, inv)
			const aid = 11
			held := reserve(context.Background(), c, aid, "held")
			first := inv.next(t)
			var answers []chan outcome
			for i := range 5 {
				answers = append(answers, reserve(context.Background(), c, aid, fmt.Sprintf("f%d", i)))
				waitQueued(t, c, aid, i+1)
			}
			first.ok()
			wait(t, held)
			tc.fail(inv.next(t))
			for i, ch := range answers {
				if o := wait(t, ch); xerr.CodeOf(o.err) != tc.want || o.res != nil {
					t.Errorf("caller %d: %+v, %v; want %s", i, o.res, o.err, tc.want)
				}
			}
			waitIdle(t, c)
		})
	}
}

// busyInventory answers at once, after a pause, and records what it saw.
type busyInventory struct {
	inFlight            int
	maxBatch            int
	mu                  sync.Mutex
	active              map[int64]int // calls in flight per activity
	seen                map[string]int
	errs                []string
	batches, maxPerCall atomic.Int64
}

func (f *busyInventory) ReserveBatch(_ context.Context, in *inventoryclient.ReserveBatchReq,
	_ ...grpc.CallOption) (*inventoryclient.ReserveBatchResp, error) {
	f.mu.Lock()
	f.active[in.ActivityId]++
	if n := f.active[in.ActivityId]; n > f.inFlight {
		f.errs = append(f.errs, fmt.Sprintf("activity %d: %d calls in flight", in.ActivityId, n))
	}
	if len(in.Items) > f.maxBatch {
		f.errs = append(f.errs, fmt.Sprintf("batch of %d", len(in.Items)))
	}
	out := &inventoryclient.ReserveBatchResp{}
	for _, it := range in.Items {
		f.seen[it.RequestId]++
		if want := fmt.Sprintf("a%d-", in.ActivityId); len(it.RequestId) < len(want) || it.RequestId[:len(want)] != want {
			f.errs = append(f.errs, fmt.Sprintf("%s sent for activity %d", it.RequestId, in.ActivityId))
		}
		out.Results = append(out.Results, &inventoryclient.ReserveResult{Reservation: &inventoryclient.ReserveResp{
			OrderNo: "o-" + it.RequestId, Quantity: it.Uid}})
	}
	f.mu.Unlock()
	f.batches.Add(1)
	for n := f.maxPerCall.Load(); int64(len(in.Items)) > n && !f.maxPerCall.CompareAndSwap(n, int64(len(in.Items))); {
		n = f.maxPerCall.Load()
	}
	time.Sleep(200 * time.Microsecond)
	f.mu.Lock()
	f.active[in.ActivityId]--
	f.mu.Unlock()
	return out, nil
}

// Many callers on several activities at once: each gets its own answer, each reservation is
// sent once, with the activity's calls never above InFlight nor a batch above MaxBatch.
func TestConcurrentCallersAcrossActivities(t *testing.T) {
	const activities, callers, rounds = 6, 40, 5
	conf := Conf{InFlight: 2, MaxBatch: 16}
	inv := &busyInventory{inFlight: conf.InFlight, maxBatch: conf.MaxBatch, active: map[int64]int{},
		seen: map[string]int{}}
	c := New(conf, inv)
	var wg sync.WaitGroup
	var failures atomic.Int64
	for a := range activities {
		for u := range callers {
			wg.Go(func() {
				for r := range rounds {
					aid, uid := int64(a+1), int64(u+1)
					rid := fmt.Sprintf("a%d-u%d-r%d", aid, uid, r)
					res, err := c.Reserve(context.Background(), aid,
						&inventoryclient.ReserveItem{Uid: uid, Quantity: 1, RequestId: rid})
					if err != nil || res.OrderNo != "o-"+rid || res.Quantity != uid {
						failures.Add(1)
						t.Errorf("%s: %+v, %v", rid, res, err)
					}
				}
			})
		}
	}
	wg.Wait()
	waitIdle(t, c)
	if failures.Load() > 0 {
		return
	}
	inv.mu.Lock()
	defer inv.mu.Unlock()
	for _, e := range inv.errs {
		t.Error(e)
	}
	if len(inv.seen) != activities*callers*rounds {
		t.Errorf("%d distinct reservations sent, want %d", len(inv.seen), activities*callers*rounds)
	}
	for rid, n := range inv.seen {
		if n != 1 {
			t.Errorf("%s sent %d times", rid, n)
		}
	}
	if inv.maxPerCall.Load() < 2 {
		t.Errorf("no batch above one reservation in %d calls", inv.batches.Load())
	}
	t.Logf("%d reservations in %d calls (largest %d)", len(inv.seen), inv.batches.Load(), inv.maxPerCall.Load())
}
