package edge

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	red "github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/api/internal/coalesce"
	"github.com/seckill/seckill/internal/stock"
)

const (
	// holderCallsInFlight is the most buyers-hash reads of one activity at once per gateway.
	// One: what queues while it is out leaves as the next read, so a storm's checks make
	// as few round trips as the read's time allows (with 2, a "sale vs bare" profile had
	// the reads' write syscalls at 2 % of the bench process: batches of a few ids).
	holderCallsInFlight = 1
	// holderBatch is the most request ids in one read.
	holderBatch = 256
)

var replayChecks = promauto.NewCounterVec(prometheus.CounterOpts{
	Namespace: "seckill",
	Subsystem: "api",
	Name:      "edge_replay_checks_total",
	Help: "reservations a mark would have answered, by what the buyers hash said of their request id: " +
		"held (sent on as a replay), free (answered from the mark), unknown (the read failed: sent on)",
}, []string{"outcome"})

// The replayChecks children, looked up once (WithLabelValues hashes the label and takes the
// vector's lock at each call).
var (
	replayHeld    = replayChecks.WithLabelValues("held")
	replayFree    = replayChecks.WithLabelValues("free")
	replayUnknown = replayChecks.WithLabelValues("unknown")
)

// holders tells whether buyers hold an order for a request id: the request ids of one
// activity that queued while earlier reads were out leave as one HMGET of its buyers hash
// (coalesce.Group), so a sold-out storm costs Redis one round trip per batch.
type holders struct {
	rds   red.UniversalClient
	keys  stock.Keys
	wait  time.Duration
	group *coalesce.Group[string, bool]
}

func newHolders(rds red.UniversalClient, keys stock.Keys, wait time.Duration) *holders {
	h := &holders{rds: rds, keys: keys, wait: wait}
	h.group = coalesce.NewGroup(holderCallsInFlight, holderBatch, coalesce.Metrics{}, h.read)
	return h
}

// read is one HMGET of aid's buyers hash: whether each request id field is set.
func (h *holders) read(ctx context.Context, aid int64, fields []string) ([]bool, error) {
	vals, err := h.rds.HMGet(ctx, h.keys.Buyers(aid), fields...).Result()
	if err != nil {
		return nil, err
	}
	held := make([]bool, len(vals))
	for i, v := range vals {
		held[i] = v != nil
	}
	return held, nil
}

// mayHold reports whether uid may hold an order of aid for requestID: false only when the
// buyers hash said it does not; a failed or late read is true (the service answers).
func (h *holders) mayHold(ctx context.Context, aid, uid int64, requestID string) bool {
	held, err := h.group.DoWithin(ctx, aid, stock.ReqField(uid, requestID), h.wait)
	switch {
	case err != nil:
		replayUnknown.Inc()
		return true
	case held:
		replayHeld.Inc()
		return true
	}
	replayFree.Inc()
	return false
}
