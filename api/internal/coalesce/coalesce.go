// Package coalesce shares the gateway's zRPC hop among reservations: per activity, what queued
// while earlier calls were in flight leaves as one ReserveBatch (docs/DESIGN.md "Coalesced reservations").
package coalesce

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// Conf bounds the coalescing of one activity's reservations in this gateway.
type Conf struct {
	// Enabled sends reservations as ReserveBatch calls; off, each is its own Reserve call.
	Enabled bool `json:",default=true"`
	// InFlight is the most ReserveBatch calls of one activity at once.
	InFlight int `json:",default=2,range=[1:64]"`
	// MaxBatch is the most reservations in one call (the inventory service takes up to 512).
	MaxBatch int `json:",default=128,range=[1:512]"`
}

// Batcher is the inventory service's batch reservation (inventoryclient.Inventory has it).
type Batcher interface {
	ReserveBatch(ctx context.Context, in *inventoryclient.ReserveBatchReq,
		opts ...grpc.CallOption) (*inventoryclient.ReserveBatchResp, error)
}

// Coalescer queues reservations per activity and sends each queue's contents as one batch
// whenever one of the activity's InFlight senders is free; it has no timer.
type Coalescer struct {
	group *Group[*inventoryclient.ReserveItem, *inventoryclient.ReserveResult]
}

// New returns a coalescer of c's bounds that sends through inv.
func New(c Conf, inv Batcher) *Coalescer {
	send := func(ctx context.Context, aid int64,
		items []*inventoryclient.ReserveItem) ([]*inventoryclient.ReserveResult, error) {
		resp, err := inv.ReserveBatch(ctx, &inventoryclient.ReserveBatchReq{ActivityId: aid, Items: items})
		if err != nil {
			return nil, err
		}
		return resp.GetResults(), nil
	}
	m := Metrics{BatchSize: metricBatchSize, QueueWait: metricQueueWait, Expired: metricExpired}
	return &Coalescer{group: NewGroup(c.InFlight, c.MaxBatch, m, send)}
}

// Reserve queues item for activity aid and returns its own answer: the reservation or its
// *xerr.Error, the batch's error when the whole call failed, BUSY when ctx ended before it was sent.
// The batch's zRPC call is traced under its first reservation's request.
func (c *Coalescer) Reserve(ctx context.Context, aid int64,
	item *inventoryclient.ReserveItem) (*inventoryclient.ReserveResp, error) {
	r, err := c.group.Do(ctx, aid, item)
	if err != nil {
		return nil, err
	}
	return itemResult(r)
}

// itemResult is what a single Reserve would have returned for r.
func itemResult(r *inventoryclient.ReserveResult) (*inventoryclient.ReserveResp, error) {
	switch {
	case r == nil || r.Reservation == nil && r.Code == "":
		return nil, xerr.New(xerr.Internal, "reserve batch: an item without an answer")
	case r.Code != "":
		return nil, xerr.Known(xerr.Code(r.Code), r.Msg)
	}
	return r.Reservation, nil
}

// SendFunc sends items, queued for key, as one call and returns one result per item (in
// order), or the error of the whole call. ctx is the first item's context, not cancelled by
// any one caller, bounded by the latest of their deadlines.
type SendFunc[I, R any] func(ctx context.Context, key int64, items []I) ([]R, error)

// Metrics observes a Group; a nil field is not observed.
type Metrics struct {
	BatchSize prometheus.Observer // items per call
	QueueWait prometheus.Observer // seconds from joining the queue to being sent
	Expired   prometheus.Counter  // items answered BUSY, never sent: their deadline passed queued
}

// Group queues items per key and sends each queue's contents as one call whenever one of the
// key's inFlight senders is free; it has no timer (docs/DESIGN.md "Coalesced reservations").
type Group[I, R any] struct {
	send     SendFunc[I, R]
	inFlight int
	maxBatch int
	metrics  Metrics

	mu     sync.Mutex
	queues map[int64]*queue[I, R] // only keys with queued or sent items
}

// NewGroup returns a group sending through send, at most inFlight calls per key at once and
// at most maxBatch items per call.
func NewGroup[I, R any](inFlight, maxBatch int, m Metrics, send SendFunc[I, R]) *Group[I, R] {
	return &Group[I, R]{send: send, inFlight: max(inFlight, 1), maxBatch: max(maxBatch, 1), metrics: m,
		queues: map[int64]*queue[I, R]{}}
}

// queue is one key's waiting calls (in arrival order) and its running senders.
type queue[I, R any] struct {
	waiting []*call[I, R]
	senders int
}

// A call's states: queued until a sender takes it or its caller gives up (abandoned).
const (
	queued int32 = iota
	taken
	abandoned
)

// call is one queued item; done receives its answer exactly once (buffered).
type call[I, R any] struct {
	ctx   context.Context
	until time.Time // DoWithin's bound besides ctx's deadline; zero: none
	item  I
	since time.Time
	state atomic.Int32
	done  chan result[R]
}

// lapsed: cl's caller no longer waits for it at now (its context ended or its bound passed).
func (cl *call[I, R]) lapsed(now time.Time) bool {
	return cl.ctx.Err() != nil || !cl.until.IsZero() && !now.Before(cl.until)
}

// deadline is cl's: the earlier of its context's and its bound.
func (cl *call[I, R]) deadline() (time.Time, bool) {
	d, ok := cl.ctx.Deadline()
	if !cl.until.IsZero() && (!ok || cl.until.Before(d)) {
		return cl.until, true
	}
	return d, ok
}

type result[R any] struct {
	res R
	err error
}

// Do queues item for key and returns its own result, the call's error when the whole call
// failed (through xerr.FromStatus), or BUSY when ctx ended before it was sent.
func (g *Group[I, R]) Do(ctx context.Context, key int64, item I) (R, error) {
	return g.do(ctx, key, item, 0, false)
}

// DoWithin is Do under context.WithTimeout(ctx, wait) (BUSY when wait passes before item
// was sent; the call's deadline at most wait from now), without a context and a timer made
// per item: the gateway's replay check runs it before every sold-out answer.
func (g *Group[I, R]) DoWithin(ctx context.Context, key int64, item I, wait time.Duration) (R, error) {
	return g.do(ctx, key, item, wait, true)
}

func (g *Group[I, R]) do(ctx context.Context, key int64, item I, wait time.Duration, bounded bool) (R, error) {
	var zero R
	if ctx.Err() != nil || bounded && wait <= 0 {
		g.expired()
		return zero, xerr.ErrBusy
	}
	now := time.Now()
	cl := &call[I, R]{ctx: ctx, item: item, since: now, done: make(chan result[R], 1)}
	var expire <-chan time.Time
	if bounded {
		cl.until = now.Add(wait)
		t := startTimer(wait)
		defer stopTimer(t)
		expire = t.C
	}
	if g.enqueue(key, cl) {
		go g.run(key)
	}
	select {
	case r := <-cl.done:
		return r.res, r.err
	case <-ctx.Done():
	case <-expire:
	}
	if cl.state.CompareAndSwap(queued, abandoned) {
		g.expired()
		return zero, xerr.ErrBusy
	}
	r := <-cl.done // sent already: its outcome is the call's
	return r.res, r.err
}

// timers are DoWithin's, reused: since Go 1.23 a stopped or reset timer's channel holds no
// stale tick.
var timers = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}}

func startTimer(d time.Duration) *time.Timer {
	t := timers.Get().(*time.Timer)
	t.Reset(d)
	return t
}

func stopTimer(t *time.Timer) {
	t.Stop()
	timers.Put(t)
}

func (g *Group[I, R]) expired() {
	if g.metrics.Expired != nil {
		g.metrics.Expired.Inc()
	}
}

// enqueue appends cl to key's queue and reports whether a new sender must start.
func (g *Group[I, R]) enqueue(key int64, cl *call[I, R]) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	q := g.queues[key]
	if q == nil {
		q = &queue[I, R]{}
		g.queues[key] = q
	}
	q.waiting = append(q.waiting, cl)
	if q.senders < g.inFlight {
		q.senders++
		return true
	}
	return false
}

// run is one of key's senders: it sends what waits until the queue is empty.
func (g *Group[I, R]) run(key int64) {
	for {
		batch := g.take(key)
		if batch == nil {
			return
		}
		g.sendBatch(key, batch)
	}
}

// take removes up to maxBatch live calls from the head of key's queue, answering BUSY to
// those whose deadline passed. With none left, the sender stops; the last one drops the queue.
func (g *Group[I, R]) take(key int64) []*call[I, R] {
	g.mu.Lock()
	defer g.mu.Unlock()
	q := g.queues[key]
	var batch []*call[I, R]
	n := 0
	now := time.Now()
	for ; n < len(q.waiting) && len(batch) < g.maxBatch; n++ {
		cl := q.waiting[n]
		if !cl.state.CompareAndSwap(queued, taken) {
			continue // its caller gave up
		}
		if cl.lapsed(now) {
			g.expired()
			cl.done <- result[R]{err: xerr.ErrBusy}
			continue
		}
		batch = append(batch, cl)
	}
	clear(q.waiting[:n])
	q.waiting = q.waiting[n:]
	if len(batch) > 0 {
		return batch
	}
	q.waiting = nil
	if q.senders--; q.senders == 0 {
		delete(g.queues, key)
	}
	return nil
}

// sendBatch sends batch as one call, bounded by the latest of its deadlines, under the first
// call's context (its trace), and answers each call.
func (g *Group[I, R]) sendBatch(key int64, batch []*call[I, R]) {
	items := make([]I, len(batch))
	now := time.Now()
	var latest time.Time
	bounded := true
	for i, cl := range batch {
		items[i] = cl.item
		if g.metrics.QueueWait != nil {
			g.metrics.QueueWait.Observe(now.Sub(cl.since).Seconds())
		}
		d, ok := cl.deadline()
		bounded = bounded && ok
		if d.After(latest) {
			latest = d
		}
	}
	if g.metrics.BatchSize != nil {
		g.metrics.BatchSize.Observe(float64(len(batch)))
	}
	ctx := context.WithoutCancel(batch[0].ctx)
	if bounded {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, latest)
		defer cancel()
	}
	res, err := g.send(ctx, key, items)
	if err == nil && len(res) != len(batch) {
		err = xerr.Newf(xerr.Internal, "coalesced call: %d results for %d items", len(res), len(batch))
	}
	if err != nil {
		failed := result[R]{err: xerr.FromStatus(err)}
		for _, cl := range batch {
			cl.done <- failed
		}
		return
	}
	for i, cl := range batch {
		cl.done <- result[R]{res: res[i]}
	}
}
