// Package coalesce shares the gateway's zRPC hop among reservations: per activity, what queued
// while earlier calls were in flight leaves as one ReserveBatch (docs/DESIGN.md "Coalesced reservations").
package coalesce

import (
	"context"

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
