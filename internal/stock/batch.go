package stock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/xerr"
)

// A ReserveResult is one item's answer: what a single reservation of it would have returned.
type ReserveResult struct {
	domain.Reservation
	Err error
	// entries are the outbox entries the answer waits on (WithEntries; each holds its epoch):
	// a reservation's own, a replay's still in the outbox, an entrant's. One entry may be
	// several items' (a replay of an order an earlier item of the call made): Awaited.
	entries []Entry
}

// Awaited returns the entries results wait on, each once, and for each the indexes of the
// results that wait on it: what a caller acknowledges in one go for the whole call.
func Awaited(results []ReserveResult) (es []Entry, waiting [][]int) {
	at := map[string]int{} // entry id -> index in es
	for i, r := range results {
		for _, e := range r.entries {
			k, ok := at[e.ID]
			if !ok {
				k = len(es)
				at[e.ID] = k
				es = append(es, e)
				waiting = append(waiting, nil)
			}
			waiting[k] = append(waiting[k], i)
		}
	}
	return es, waiting
}

// ReserveBatch reserves items of activity aid in order in one script call, each with the answer
// a single reservation would give; err is a failure of the whole batch (not warm, lease lapsed).
func (s *Store) ReserveBatch(ctx context.Context, aid int64, items []domain.ReserveItem,
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
func (s *Store) queueDrawReplays(ctx context.Context, aid int64, items []domain.ReserveItem, res []ReserveResult,
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
	again := make([]domain.ReserveItem, len(replays))
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
func (s *Store) reserveBatch(ctx context.Context, aid int64, items []domain.ReserveItem, sellBy time.Time,
	serve bool) ([]ReserveResult, error) {
	if err := domain.CheckActivityID(aid); err != nil {
		return nil, err
	}
	if len(items) == 0 || len(items) > MaxReserveBatch {
		return nil, xerr.Newf(xerr.InvalidArgument, "a batch holds 1..%d items, not %d", MaxReserveBatch, len(items))
	}
	out := make([]ReserveResult, len(items))
	replies := make([]*itemReply, len(items))
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
			r := &res[j]
			if r.code == codeOrderNoTaken && attempt < orderNoAttempts {
				again = append(again, i)
				continue
			}
			replies[i] = r
		}
		todo = again
	}
	for i, r := range replies {
		if r == nil {
			continue
		}
		if out[i].entries, out[i].Err = r.entries(aid); out[i].Err == nil {
			out[i].Reservation, out[i].Err = r.reservation()
		}
	}
	return out, nil
}

// itemReply is reserve.lua's answer for one item.
type itemReply struct {
	code int64 // 0 reserved, codeReplay, < 0 refused (codes.go)
	// reserved: the order and, WithEntries, the batch's entry its event is in
	res        domain.Reservation
	batch      []Entry
	replay     reserveReplay // codeReplay: the order as it is now, and WithEntries its unsent entries
	replayGone bool          // codeReplay: the order is gone (only its number came back)
	err        error         // the reply's entries are malformed (the change may be made: not acknowledged)
}

// reserveOnce runs reserve.lua once for the items at indices todo, with fresh order numbers, and
// returns each one's answer.
func (s *Store) reserveOnce(ctx context.Context, aid int64, items []domain.ReserveItem, todo []int,
	sellBy time.Time, serve bool) ([]itemReply, error) {
	call := reserveArgs{ActivityID: aid, SellByMs: sellByMs(sellBy), WantEntries: s.wantEntry(),
		TraceParent: event.TraceParent(ctx), Serve: flag(serve)}
	group := make([]reserveItemArgs, len(todo))
	nos, qty := make([]string, len(todo)), make([]int64, len(todo))
	for j, i := range todo {
		it := items[i]
		nos[j], qty[j] = domain.NewOrderNo(aid, s.orderKey), it.Qty
		group[j] = reserveItem(nos[j], it)
	}
	res, err := s.run(ctx, reserveScript, aid, s.keys.reserve(aid), call.argv(group)...)
	if err != nil {
		return nil, err
	}
	out, err := parseReserve(aid, res, nos, qty, s.entries)
	for j := range out {
		if out[j].code == codeReplay {
			out[j].replay.OrderNo = s.replayOrderNo(aid, out[j].replay.OrderNo)
		}
	}
	return out, err
}

// reserveItem is item it's group of reserve.lua's ARGV, its order to be numbered orderNo.
func reserveItem(orderNo string, it domain.ReserveItem) reserveItemArgs {
	return reserveItemArgs{OrderNo: orderNo, Short: shortNo(orderNo), UID: it.UID, Qty: it.Qty,
		RequestID: it.RequestID, ReqField: ReqField(it.UID, it.RequestID)}
}

// replayOrderNo is the order_no of a replay's order, which reserve.lua names by its short
// number (the buyers hash's value), or the draw's loser value as it is.
func (s *Store) replayOrderNo(aid int64, short string) string {
	if short == loserValue {
		return short
	}
	return s.orderNoOf(aid, short)
}

// parseReserve reads reserve.lua's reply res for items of order numbers nos and quantities qty
// (the batch's entry with them when withEntries) of activity aid.
func parseReserve(aid int64, res []any, nos []string, qty []int64, withEntries bool) ([]itemReply, error) {
	n := len(nos)
	if len(res) != reserveHead+n {
		return nil, fmt.Errorf("stock script reserve: %d values for %d items, want %d", len(res), n, reserveHead+n)
	}
	head := decoded[reserveReply](res)
	remaining := head.Remaining
	var batch []Entry // the reserved items' one entry, WithEntries
	var batchErr error
	if withEntries && head.EntryID != "" {
		e, err := newEntry(aid, head.EntryID, head.Entry)
		batch, batchErr = []Entry{e}, err
	}
	out := make([]itemReply, n)
	for j := range n {
		r := &out[j]
		switch v := res[reserveHead+j].(type) {
		case int64:
			switch {
			case v == 0: // reserved: its event in the batch's entry
				if head.EntryID == "" {
					return nil, fmt.Errorf("stock script reserve: item %d reserved without an entry", j)
				}
				remaining -= qty[j]
				r.res = domain.Reservation{Order: domain.Order{OrderNo: nos[j], Quantity: qty[j], ExpireAt: head.ExpireAtMs,
					CreatedAt: head.CreatedMs, State: domain.StateReserved}, Remaining: remaining}
				r.batch, r.err = batch, batchErr
			case v > 0:
				return nil, fmt.Errorf("stock script reserve: item %d answered %d", j, v)
			default:
				r.code = v
			}
		case []any:
			replay, whole := decodeReplay(v)
			if replay.Code != codeReplay {
				return nil, fmt.Errorf("stock script reserve: bad item reply %v", v)
			}
			r.code, r.replay, r.replayGone = codeReplay, replay, !whole
		default:
			return nil, fmt.Errorf("stock script reserve: bad item reply %v", v)
		}
	}
	return out, nil
}

// reservation is the item's answer.
func (r *itemReply) reservation() (domain.Reservation, error) {
	switch {
	case r.code < 0:
		return domain.Reservation{}, codeError(r.code)
	case r.code == codeReplay:
		v := r.replay
		if v.OrderNo == loserValue { // an entrant the draw left without stock
			return domain.Reservation{}, xerr.ErrDrawLost
		}
		if r.replayGone { // the replayed order's keys are gone
			return domain.Reservation{}, xerr.ErrOrderNotFound
		}
		return domain.Reservation{Order: domain.Order{OrderNo: v.OrderNo, State: v.State, Quantity: v.Qty,
			ExpireAt: v.ExpireAtMs, CreatedAt: v.CreatedMs}, Remaining: v.Remaining, Replay: true}, nil
	}
	return r.res, nil
}

// entries are the outbox entries the item's answer waits on (WithEntries): a reserved item's
// own, a replay's unsent ones.
func (r *itemReply) entries(aid int64) ([]Entry, error) {
	switch {
	case r.err != nil:
		return nil, r.err
	case r.code == 0:
		return r.batch, nil
	case r.code == codeReplay:
		return entryList(aid, r.replay.Unsent)
	}
	return nil, nil
}

// newEntry is entry id of activity aid from v, its packed entry (a string) or its stream
// fields (a flat field, value list).
func newEntry(aid int64, id string, v any) (Entry, error) {
	var values map[string]any
	switch v := v.(type) {
	case string:
		values = map[string]any{event.FieldEntry: v}
	case []any:
		if len(v)%2 != 0 {
			return Entry{}, fmt.Errorf("stock script reply: bad outbox entry fields %v", v)
		}
		values = make(map[string]any, len(v)/2)
		for j := 0; j < len(v); j += 2 {
			values[toString(v, j)] = toString(v, j+1)
		}
	default:
		return Entry{}, fmt.Errorf("stock script reply: bad outbox entry %v", v)
	}
	e := Entry{ActivityID: aid, ID: id, Values: values}
	// An entry that does not parse stays as it is: the acker refuses it (relay.Acker), and
	// only then reads its epoch and count. A batch's events share both: its first line holds
	// them, and its events' lines are left to the acker, which reads them anyway.
	if a, err := event.EntryShared(values); err == nil {
		e.Epoch, _ = strconv.ParseInt(a[event.FieldEpoch], 10, 64)
		e.Seq, _ = strconv.ParseInt(a[event.FieldSeq], 10, 64)
	}
	return e, nil
}

// wantEntry is reserve's and enter's ARGV[3]: "1" when the script is to return its outbox
// entries (WithEntries), "0" when only the entry ids are needed.
func (s *Store) wantEntry() string { return flag(s.entries) }
