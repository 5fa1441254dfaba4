package middleware

import (
	"context"
	"net/http"

	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/seckill/seckill/api/internal/edge"
	"github.com/seckill/seckill/api/internal/reply"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/internal/xerr"
)

// ReserveEdgeMiddleware runs the reservation route's edge.Gate: it answers what the gate
// knows (bad input, sold out, not started, ended) and hands the decoded request on.
type ReserveEdgeMiddleware struct {
	gate                     *edge.Gate
	soldOut, notStarted, end *reply.Prepared
	// ClientAddr, when set, is the request's client address handed on with the reservation
	// (ClientAddr(ctx)): the inventory service bounds a draw's entrants per address.
	ClientAddr func(*http.Request) string
}

// NewReserveEdgeMiddleware runs gate; its mark answers are written pre-encoded (reply.Prepared).
func NewReserveEdgeMiddleware(gate *edge.Gate) *ReserveEdgeMiddleware {
	return &ReserveEdgeMiddleware{gate: gate, soldOut: reply.Prepare(xerr.ErrSoldOut),
		notStarted: reply.Prepare(xerr.ErrNotStarted), end: reply.Prepare(xerr.ErrEnded)}
}

// reservation is a request's decoded reservation, its client address and the error it was
// answered with.
type reservation struct {
	req  types.ReserveReq
	addr string
	reply.Outcome
}

type reservationKey struct{}

// ClientAddr is the client address of ctx's reservation ("" when not handed on).
func ClientAddr(ctx context.Context) string {
	if res, ok := ctx.Value(reservationKey{}).(*reservation); ok {
		return res.addr
	}
	return ""
}

// Reservation is the reservation the middleware decoded and checked for ctx's request.
func Reservation(ctx context.Context) (*types.ReserveReq, bool) {
	res, ok := ctx.Value(reservationKey{}).(*reservation)
	if !ok {
		return nil, false
	}
	return &res.req, true
}

func (m *ReserveEdgeMiddleware) Handle(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req, gen, err := m.gate.Check(r)
		if err != nil {
			m.write(w, r, err)
			return
		}
		res := &reservation{req: req}
		if m.ClientAddr != nil {
			res.addr = m.ClientAddr(r)
		}
		ctx := reply.WithOutcome(context.WithValue(r.Context(), reservationKey{}, res), &res.Outcome)
		next(w, r.WithContext(ctx))
		m.gate.Observe(req.ActivityId, gen, res.Err)
	}
}

// write writes the answer err of edge.Gate.Check.
func (m *ReserveEdgeMiddleware) write(w http.ResponseWriter, r *http.Request, err error) {
	switch err {
	case xerr.ErrSoldOut:
		m.soldOut.Write(r.Context(), w)
	case xerr.ErrNotStarted:
		m.notStarted.Write(r.Context(), w)
	case xerr.ErrEnded:
		m.end.Write(r.Context(), w)
	default:
		httpx.ErrorCtx(r.Context(), w, err)
	}
}
