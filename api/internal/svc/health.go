package svc

import (
	"context"
	"sync"
	"time"

	"github.com/zeromicro/go-zero/core/syncx"
	"github.com/zeromicro/go-zero/zrpc"

	"github.com/seckill/seckill/rpc/inventoryclient"
)

const (
	// healthTTL is how long one dependency check answers /healthz: however many ask, a
	// gateway pings the inventory service (which pings Redis) at most once per healthTTL.
	healthTTL = time.Second
	// healthTimeout bounds a check, well under the route timeout and apart from the
	// zRPC client's timeout for the sale (Inventory.Timeout, which may be a few ms).
	healthTimeout = time.Second
)

// Health is the gateway's cached dependency status (docs/API.md "Operations"): the last
// Ping of the inventory service, its answer or its error, kept healthTTL; concurrent askers
// of an expired one share one Ping.
type Health struct {
	inv    inventoryclient.Inventory
	flight syncx.SingleFlight
	now    func() time.Time

	mu   sync.Mutex
	at   time.Time // of the last check; zero: none yet
	resp *inventoryclient.PingResp
	err  error
}

// NewHealth checks through inv.
func NewHealth(inv inventoryclient.Inventory) *Health {
	return &Health{inv: inv, flight: syncx.NewSingleFlight(), now: time.Now}
}

// Status is the dependency status at most healthTTL old: the inventory service's Ping
// answer (degraded activities, Redis down) or why it could not be had.
func (h *Health) Status() (*inventoryclient.PingResp, error) {
	if resp, err, ok := h.cached(); ok {
		return resp, err
	}
	v, _ := h.flight.Do("ping", func() (any, error) {
		if resp, err, ok := h.cached(); ok { // checked while this caller waited for the flight
			return status{resp, err}, nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), healthTimeout)
		defer cancel()
		resp, err := h.inv.Ping(ctx, &inventoryclient.PingReq{}, zrpc.WithCallTimeout(healthTimeout))
		h.mu.Lock()
		h.at, h.resp, h.err = h.now(), resp, err
		h.mu.Unlock()
		return status{resp, err}, nil
	})
	s := v.(status)
	return s.resp, s.err
}

type status struct {
	resp *inventoryclient.PingResp
	err  error
}

func (h *Health) cached() (*inventoryclient.PingResp, error, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.at.IsZero() || h.now().Sub(h.at) >= healthTTL {
		return nil, nil, false
	}
	return h.resp, h.err, true
}

// Degraded reports whether activity aid is served in degrade mode (or being rebuilt), as
// of the cached status; false when the status could not be had.
func (h *Health) Degraded(aid int64) bool {
	resp, err := h.Status()
	if err != nil {
		return false
	}
	for _, id := range resp.GetDegraded() {
		if id == aid {
			return true
		}
	}
	return false
}
