package reserve

import (
	"context"
	"net/http"

	"github.com/seckill/seckill/api/internal/reply"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// state is what the stages learned of one request, kept in its context.
type state struct {
	authed, decoded, checked bool
	uid                      int64
	authErr                  error // the 401 answer, when authed
	req                      types.ReserveReq
	gen                      uint64 // the marks' generation when checked (Gate.Observe)
	checkErr                 error  // the Gate's answer, when checked
	addr                     string
	reply.Outcome
}

type stateKey struct{}

func stateOf(ctx context.Context) *state {
	st, _ := ctx.Value(stateKey{}).(*state)
	return st
}

// with is r with a state of its own (the one it carries, if any).
func with(r *http.Request) (*http.Request, *state) {
	if st := stateOf(r.Context()); st != nil {
		return r, st
	}
	st := &state{}
	return r.WithContext(context.WithValue(r.Context(), stateKey{}, st)), st
}

// authenticate runs the Authenticate stage once per request.
func (p *Pipeline) authenticate(r *http.Request, st *state) (int64, error) {
	if !st.authed {
		st.uid, st.authErr = p.s.Authenticate(r)
		st.authed = true
	}
	return st.uid, st.authErr
}

// Request is the reservation Route decoded and checked for ctx's request.
func Request(ctx context.Context) (*types.ReserveReq, bool) {
	st := stateOf(ctx)
	if st == nil || !st.checked {
		return nil, false
	}
	return &st.req, true
}

// Item is ctx's reservation (Request) as the inventory service takes it: its activity, and the
// item of the buyer Route authenticated, with the client's address.
func Item(ctx context.Context) (aid int64, it *inventoryclient.ReserveItem, ok bool) {
	st := stateOf(ctx)
	if st == nil || !st.checked {
		return 0, nil, false
	}
	return st.req.ActivityId, &inventoryclient.ReserveItem{Uid: st.uid, Quantity: st.req.Quantity,
		RequestId: st.req.RequestId, ClientAddr: st.addr}, true
}

// ErrNoReservation: the route runs without Route (a wiring error).
var ErrNoReservation = xerr.New(xerr.Internal, "reserve: no decoded reservation")
