package stock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/xerr"
)

// A ReserveItem is one buyer's reservation in a batch.
type ReserveItem struct {
	UID       int64
	Qty       int64
	RequestID string
}

// A ReserveResult is one item's answer: what a single reservation of it would have returned.
type ReserveResult struct {
	Reservation
	Err error
}

// ReserveBatch reserves items of activity aid in order in one script call, each with the answer
// a single reservation would give; err is a failure of the whole batch (not warm, lease lapsed).
func (s *Store) ReserveBatch(ctx context.Context, aid int64, items []ReserveItem,
	sellBy time.Time) ([]ReserveResult, error) {
	res, err := s.reserveBatch(ctx, aid, items, sellBy, false)
	if errors.Is(err, errDrawPending) { // the draw's window, or the draw running: entries
		return s.enter(ctx, aid, items, sellBy)
	}
	if err != nil {
		return res, err
	}
	return s.queueDrawReplays(ctx, aid, items, res, sellBy)
}

// queueDrawReplays answers the replays among res with the buyer's entry while the activity's
// draw is running: a winner's replay finds its order before the draw is done (the script
// replays before it looks at the draw), and is queued until it is (docs/API.md, "The opening
// draw"). One read of the stock hash, only for a batch with a replay.
func (s *Store) queueDrawReplays(ctx context.Context, aid int64, items []ReserveItem, res []ReserveResult,
	sellBy time.Time) ([]ReserveResult, error) {
	var replays []int
	for i, r := range res {
		if r.Err == nil && r.Replay {
			replays = append(replays, i)
		}
	}
	if len(replays) == 0 {
		return res, nil
	}
	v, err := s.rds.HmgetCtx(ctx, s.keys.Stock(aid), "draw_at", "drawn")
	if err != nil {
		return nil, dep(err)
	}
	if len(v) < 2 || v[0] == "" || v[1] == "1" {
		return res, nil // no draw, or done
	}
	again := make([]ReserveItem, len(replays))
	for j, i := range replays {
		again[j] = items[i]
	}
	queued, err := s.enter(ctx, aid, again, sellBy) // the draw done meanwhile: the replays again
	if err != nil {
		return nil, err
	}
	for j, i := range replays {
		res[i] = queued[j]
	}
	return res, nil
}

// reserveBatch is ReserveBatch; serve is the draw serving its entrants (draw.go).
func (s *Store) reserveBatch(ctx context.Context, aid int64, items []ReserveItem, sellBy time.Time,
	serve bool) ([]ReserveResult, error) {
	if err := domain.CheckActivityID(aid); err != nil {
		return nil, err
	}
	if len(items) == 0 || len(items) > MaxReserveBatch {
		return nil, xerr.Newf(xerr.InvalidArgument, "a batch holds 1..%d items, not %d", MaxReserveBatch, len(items))
	}
	out := make([]ReserveResult, len(items))
	replies := make([][]any, len(items))
	todo := make([]int, 0, len(items))
	for i, it := range items {
		if out[i].Err = firstErr(domain.CheckUID(it.UID), domain.CheckQuantity(it.Qty),
			domain.CheckRequestID(it.RequestID)); out[i].Err == nil {
			todo = append(todo, i)
		}
	}
	// An item whose fresh order number was taken wrote nothing: it goes again, alone with
	// the others that collided, with a new number.
	for attempt := 0; len(todo) > 0; attempt++ {
		res, err := s.reserveOnce(ctx, aid, items, todo, sellBy, serve)
		if err != nil {
			return nil, err
		}
		var again []int
		for j, i := range todo {
			r := res[j]
			if toInt(r, 0) == codeOrderNoTaken && attempt < orderNoAttempts {
				again = append(again, i)
				continue
			}
			replies[i] = r
		}
		todo = again
	}
	errs := s.ackReplies(ctx, aid, replies)
	for i, r := range replies {
		if r == nil {
			continue
		}
		if errs[i] != nil {
			out[i].Err = errs[i]
			continue
		}
		out[i].Reservation, out[i].Err = reservation(r, items[i].Qty)
	}
	return out, nil
}

// reserveOnce runs reserve.lua once for the items at indices todo, with fresh order numbers, and
// returns each one's reply.
func (s *Store) reserveOnce(ctx context.Context, aid int64, items []ReserveItem, todo []int,
	sellBy time.Time, serve bool) ([][]any, error) {
	args := make([]any, 0, 5+6*len(todo))
	args = append(args, aid, sellByMs(sellBy), s.wantEntry(), event.TraceParent(ctx), flag(serve))
	for _, i := range todo {
		it := items[i]
		args = append(args, domain.NewOrderNo(aid, s.orderKey), it.UID, it.Qty, it.RequestID, HeldField(it.UID),
			ReqField(it.UID, it.RequestID))
	}
	res, err := s.run(ctx, reserveScript, aid, s.keys.reserve(aid), args...)
	if err != nil {
		return nil, err
	}
	if len(res) != 1+len(todo) {
		return nil, fmt.Errorf("stock script reserve: %d replies for %d items", len(res)-1, len(todo))
	}
	out := make([][]any, len(todo))
	for j := range todo {
		r, ok := res[1+j].([]any)
		if !ok || len(r) == 0 {
			return nil, fmt.Errorf("stock script reserve: bad item reply %v", res[1+j])
		}
		out[j] = r
	}
	return out, nil
}

// reservation is one item's answer from its reply.
func reservation(r []any, qty int64) (Reservation, error) {
	switch code := toInt(r, 0); {
	case code < 0:
		return Reservation{}, codeError(code)
	case code == codeReplay:
		if toString(r, 1) == lostMark { // an entrant the draw left without stock
			return Reservation{}, xerr.ErrDrawLost
		}
		if len(r) < 7 { // the replayed order's keys are gone
			return Reservation{}, xerr.ErrOrderNotFound
		}
		return Reservation{OrderNo: toString(r, 1), State: toString(r, 2), Quantity: toInt(r, 3),
			ExpireAt: toInt(r, 4), CreatedAt: toInt(r, 5), Remaining: toInt(r, 6), Replay: true}, nil
	}
	return Reservation{OrderNo: toString(r, 1), Quantity: qty, Remaining: toInt(r, 2),
		ExpireAt: toInt(r, 3), CreatedAt: toInt(r, 4), State: domain.StateReserved}, nil
}

// ackReplies hands the ack hook, in one go, the outbox entries of every reserved item and the
// unsent entries of every replayed one (each entry once), and returns each item's answer: nil
// once all its entries may be acknowledged.
func (s *Store) ackReplies(ctx context.Context, aid int64, replies [][]any) []error {
	errs := make([]error, len(replies))
	if s.ack == nil {
		return errs
	}
	var es []Entry
	at := map[string]int{} // entry id -> index in es
	need := make([][]int, len(replies))
	add := func(i int, e Entry) {
		k, ok := at[e.ID]
		if !ok {
			k = len(es)
			at[e.ID] = k
			es = append(es, e)
		}
		need[i] = append(need[i], k)
	}
	for i, r := range replies {
		var list []any
		switch {
		case r == nil: // not sent: bad input
			continue
		case toInt(r, 0) == 0:
			list = r[5:]
		case toInt(r, 0) == codeReplay:
			if len(r) < 8 {
				continue
			}
			var ok bool
			if list, ok = r[7].([]any); !ok {
				errs[i] = fmt.Errorf("stock script reply: bad unsent entries %v", r[7])
				continue
			}
		default:
			continue
		}
		for j := 0; j+1 < len(list); j += 2 {
			e, err := entryAt(aid, list, j)
			if err != nil {
				errs[i] = err
				break
			}
			add(i, e)
		}
	}
	if len(es) == 0 {
		return errs
	}
	acks := s.ack(ctx, es)
	for i, ks := range need {
		for _, k := range ks {
			if errs[i] == nil && acks[k] != nil {
				errs[i] = acks[k]
			}
		}
	}
	return errs
}
