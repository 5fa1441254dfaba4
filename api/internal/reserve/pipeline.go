// Package reserve is the reservation route (POST /v1/seckill/orders) of the gateway: its
// stages, in order, are authenticate, decode, the address limit, the marks, the user limit
// and the coalesced call to the inventory service (docs/DESIGN.md "A reservation's path").
// One Pipeline, built once in the ServiceContext with its stages passed in, runs them: in
// front of go-zero's router (Front: the address limit and, on Edge.FastPath, the early
// answer from the marks) and on the route (Authenticated, Route, Send). What the front ran
// stays in the request's context, so each token is verified once and each body decoded once.
package reserve

import (
	"context"
	"net/http"

	"github.com/seckill/seckill/api/internal/edge"
	"github.com/seckill/seckill/api/internal/middleware"
	"github.com/seckill/seckill/api/internal/reply"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// The answers of the limits.
var (
	errAddrRateLimited = xerr.New(xerr.RateLimited, "too many reservation attempts from this address, slow down")
	errRateLimited     = xerr.New(xerr.RateLimited, "too many reservation attempts, slow down")
)

// A Limiter takes one reservation of a key's quota: false when over it; an error is a
// shared limiter's Redis failure.
type Limiter[K any] interface {
	Allow(ctx context.Context, key K) (bool, error)
}

// Stages are the pipeline's parts, in the order a reservation meets them.
type Stages struct {
	// Authenticate is the buyer's id from r's token, or the 401 answer (TokenAuth.Verify).
	Authenticate func(r *http.Request) (int64, error)
	// Decode is r's reservation (edge.Decode); plainOnly: in front of go-zero's chain.
	Decode func(r *http.Request, plainOnly bool) (req types.ReserveReq, ok bool, err error)
	// ClientAddr is r's client address (nil: AddrLimit off), counted by AddrQuota and handed
	// on with the reservation (the inventory service bounds a draw's entrants per address).
	ClientAddr func(r *http.Request) string
	// AddrQuota and UserQuota count reservations per address and per buyer (nil: none);
	// Failure is what they do when their Redis fails.
	AddrQuota Limiter[string]
	UserQuota Limiter[int64]
	Failure   middleware.FailurePolicy
	// Gate validates, answers from the marks and learns from the inventory service's answers.
	Gate *edge.Gate
	// Coalescer sends the reservations of an activity together (nil: one Reserve call each to
	// Inventory).
	Coalescer Coalescer
	Inventory inventoryclient.Inventory
}

// A Coalescer sends a reservation with its activity's others (coalesce.Coalescer).
type Coalescer interface {
	Reserve(ctx context.Context, aid int64, it *inventoryclient.ReserveItem) (*inventoryclient.ReserveResp, error)
}

// Front is how the pipeline runs in front of go-zero's router.
type Front struct {
	// Answer: answer from the marks there (Edge.Enabled and Edge.FastPath).
	Answer bool
	// MaxBytes is the gateway's body limit (a larger body goes to the route, which refuses it).
	MaxBytes int64
	// Trace: go-zero's Middlewares.Trace, as the gateway's Telemetry decided it
	// (internal/telemetry); Name: the gateway's name in its spans.
	Trace bool
	Name  string
	// Log: go-zero's Middlewares.Log (its access log line per request, at level info): a
	// fast answer writes the line the chain would, only when the chain writes one.
	Log bool
}

// A Pipeline runs one reservation route's stages.
type Pipeline struct {
	s     Stages
	front Front
	// method and path are the route's, as the generated routes registered it (Mount).
	method, path string
	mounts       []int      // the routes Route was applied to, while Mount registers
	routes       func() int // while Mount registers: how many routes are registered

	soldOut, notStarted, end *reply.Prepared
}

// New builds the pipeline of s, run in front of the router as front says.
func New(s Stages, front Front) *Pipeline {
	return &Pipeline{s: s, front: front, soldOut: reply.Prepare(xerr.ErrSoldOut),
		notStarted: reply.Prepare(xerr.ErrNotStarted), end: reply.Prepare(xerr.ErrEnded)}
}

// Send asks the inventory service for ctx's reservation (Request): through the Coalescer
// when there is one, else one Reserve call; an error is the item's own *xerr.Error.
func (p *Pipeline) Send(ctx context.Context) (*inventoryclient.ReserveResp, error) {
	st := stateOf(ctx)
	if st == nil || !st.checked {
		return nil, errNoReservation
	}
	req := &st.req
	if p.s.Coalescer != nil {
		return p.s.Coalescer.Reserve(ctx, req.ActivityId, &inventoryclient.ReserveItem{
			Uid: st.uid, Quantity: req.Quantity, RequestId: req.RequestId, ClientAddr: st.addr})
	}
	res, err := p.s.Inventory.Reserve(ctx, &inventoryclient.ReserveReq{ActivityId: req.ActivityId, Uid: st.uid,
		Quantity: req.Quantity, RequestId: req.RequestId, ClientAddr: st.addr})
	if err != nil {
		return nil, xerr.FromStatus(err)
	}
	return res, nil
}

// errNoReservation: the route runs without Route (a wiring error).
var errNoReservation = xerr.New(xerr.Internal, "reserve: no decoded reservation")
