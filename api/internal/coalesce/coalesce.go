// Package coalesce shares the gateway's zRPC hop among reservations: per activity, what queued
// while earlier calls were in flight leaves as one ReserveBatch (docs/DESIGN.md "Coalesced reservations").
package coalesce

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

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
	inv      Batcher
	inFlight int
	maxBatch int

	mu     sync.Mutex
	queues map[int64]*queue // only activities with queued or sent reservations
}

// queue is one activity's waiting reservations (in arrival order) and its running senders.
type queue struct {
	waiting []*call
	senders int
}

// A call's states: queued until a sender takes it or its caller gives up (abandoned).
const (
	queued int32 = iota
	taken
	abandoned
)

// call is one queued reservation; done receives its answer exactly once (buffered).
type call struct {
	ctx   context.Context
	item  *inventoryclient.ReserveItem
	since time.Time
	state atomic.Int32
	done  chan result
}

type result struct {
	res *inventoryclient.ReserveResp
	err error
}

// New returns a coalescer of c's bounds that sends through inv.
func New(c Conf, inv Batcher) *Coalescer {
	return &Coalescer{inv: inv, inFlight: max(c.InFlight, 1), maxBatch: max(c.MaxBatch, 1),
		queues: map[int64]*queue{}}
}

// Reserve queues item for activity aid and returns its own answer: the reservation or its
// *xerr.Error, the batch's error when the whole call failed, BUSY when ctx ended before it was sent.
func (c *Coalescer) Reserve(ctx context.Context, aid int64,
	item *inventoryclient.ReserveItem) (*inventoryclient.ReserveResp, error) {
	if ctx.Err() != nil {
		metricExpired.Inc()
		return nil, xerr.ErrBusy
	}
	cl := &call{ctx: ctx, item: item, since: time.Now(), done: make(chan result, 1)}
	if c.enqueue(aid, cl) {
		go c.send(aid)
	}
	select {
	case r := <-cl.done:
		return r.res, r.err
	case <-ctx.Done():
		if cl.state.CompareAndSwap(queued, abandoned) {
			metricExpired.Inc()
			return nil, xerr.ErrBusy
		}
		r := <-cl.done // sent already: its outcome is the batch's
		return r.res, r.err
	}
}

// enqueue appends cl to aid's queue and reports whether a new sender must start.
func (c *Coalescer) enqueue(aid int64, cl *call) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.queues[aid]
	if q == nil {
		q = &queue{}
		c.queues[aid] = q
	}
	q.waiting = append(q.waiting, cl)
	if q.senders < c.inFlight {
		q.senders++
		return true
	}
	return false
}

// send is one of aid's senders: it sends what waits until the queue is empty.
func (c *Coalescer) send(aid int64) {
	for {
		batch := c.take(aid)
		if batch == nil {
			return
		}
		c.reserveBatch(aid, batch)
	}
}

// take removes up to maxBatch live reservations from the head of aid's queue, answering BUSY
// to those whose deadline passed. With none left, the sender stops; the last one drops the queue.
func (c *Coalescer) take(aid int64) []*call {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.queues[aid]
	var batch []*call
	n := 0
	for ; n < len(q.waiting) && len(batch) < c.maxBatch; n++ {
		cl := q.waiting[n]
		if !cl.state.CompareAndSwap(queued, taken) {
			continue // its caller gave up
		}
		if cl.ctx.Err() != nil {
			metricExpired.Inc()
			cl.done <- result{err: xerr.ErrBusy}
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
		delete(c.queues, aid)
	}
	return nil
}

// reserveBatch sends batch as one call, bounded by the latest of its deadlines, and answers
// each reservation; the call is traced under the first one's request.
func (c *Coalescer) reserveBatch(aid int64, batch []*call) {
	req := &inventoryclient.ReserveBatchReq{ActivityId: aid, Items: make([]*inventoryclient.ReserveItem, len(batch))}
	now := time.Now()
	var latest time.Time
	bounded := true
	for i, cl := range batch {
		req.Items[i] = cl.item
		metricQueueWait.Observe(now.Sub(cl.since).Seconds())
		d, ok := cl.ctx.Deadline()
		bounded = bounded && ok
		if d.After(latest) {
			latest = d
		}
	}
	metricBatchSize.Observe(float64(len(batch)))
	ctx := context.WithoutCancel(batch[0].ctx)
	if bounded {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, latest)
		defer cancel()
	}
	resp, err := c.inv.ReserveBatch(ctx, req)
	if err == nil && len(resp.Results) != len(batch) {
		err = xerr.Newf(xerr.Internal, "reserve batch: %d results for %d items", len(resp.Results), len(batch))
	}
	if err != nil {
		failed := result{err: xerr.FromStatus(err)}
		for _, cl := range batch {
			cl.done <- failed
		}
		return
	}
	for i, cl := range batch {
		cl.done <- itemResult(resp.Results[i])
	}
}

// itemResult is what a single Reserve would have returned for r.
func itemResult(r *inventoryclient.ReserveResult) result {
	switch {
	case r.Code != "":
		return result{err: xerr.New(xerr.Code(r.Code), r.Msg)}
	case r.Reservation == nil:
		return result{err: xerr.New(xerr.Internal, "reserve batch: an item without an answer")}
	}
	return result{res: r.Reservation}
}
