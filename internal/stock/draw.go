package stock

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/xerr"
)

// loserValue is the request id's value in the buyers hash of an entrant the draw left
// without stock: reserve.lua finds no order under it, and Go answers SOLD_OUT.
const loserValue = "~lost"

// entryValue is e's value in the draw's entries hash: "qty request_id entry_id".
func entryValue(e domain.DrawEntry) string {
	return fmt.Sprintf("%d %s %s", e.Qty, e.RequestID, e.EventID)
}

func parseEntry(uid, v string) (domain.DrawEntry, bool) {
	f := strings.Fields(v)
	u, err1 := strconv.ParseInt(uid, 10, 64)
	if len(f) != 3 || err1 != nil {
		return domain.DrawEntry{}, false
	}
	q, err := strconv.ParseInt(f[0], 10, 64)
	return domain.DrawEntry{UID: u, Qty: q, RequestID: f[1], EventID: f[2]}, err == nil
}

// enter records items as entries of activity aid's draw (enter.lua), each answered with the
// buyer's entry (State domain.StateQueued) and, WithEntries, the outbox entry the answer waits on.
func (s *Store) enter(ctx context.Context, aid int64, items []domain.ReserveItem, sellBy time.Time) ([]ReserveResult,
	error) {
	out := make([]ReserveResult, len(items))
	var todo []int
	for i, it := range items {
		if out[i].Err = firstErr(domain.CheckUID(it.UID), domain.CheckQuantity(it.Qty),
			domain.CheckRequestID(it.RequestID)); out[i].Err == nil {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return out, nil
	}
	k := s.keys
	args := enterArgs{ActivityID: aid, SellByMs: sellByMs(sellBy), WantEntries: s.wantEntry(),
		TraceParent: event.TraceParent(ctx), PerAddress: s.drawEntriesPerAddr, Items: make([]enterItemArgs, len(todo))}
	for j, i := range todo {
		args.Items[j] = enterItemArgs{UID: items[i].UID, Qty: items[i].Qty, RequestID: items[i].RequestID,
			Addr: items[i].Addr}
	}
	res, err := s.run(ctx, enterScript, aid, []string{k.Stock(aid), k.DrawEntries(aid), k.Events(aid),
		k.entryAddrs(aid)}, argvOf(args)...)
	if err == errDrawDone {
		return s.reserveBatch(ctx, aid, items, sellBy, false) // the draw ended meanwhile
	}
	if err != nil {
		return nil, err
	}
	head := fields[enterReply]()
	if len(res) != head+len(todo) {
		return nil, fmt.Errorf("stock script enter: %d replies for %d items", len(res)-head, len(todo))
	}
	for j, i := range todo {
		r, _ := res[head+j].([]any)
		a := decoded[enterAnswer](r)
		if a.Code < 0 {
			out[i].Err = codeError(a.Code)
			continue
		}
		out[i].Reservation = domain.Reservation{Order: domain.Order{Quantity: a.Qty, RequestID: a.RequestID,
			State: domain.StateQueued}, DrawAt: a.DrawAtMs}
		if out[i].entries, out[i].Err = entryList(aid, a.Entry); out[i].Err != nil {
			out[i].Reservation = domain.Reservation{}
		}
	}
	return out, nil
}

// DrawEntries reads every entry of activity aid's draw, sorted by uid.
func (s *Store) DrawEntries(ctx context.Context, aid int64) ([]domain.DrawEntry, error) {
	var out []domain.DrawEntry
	var cur uint64
	for {
		kvs, next, err := s.rds.HscanCtx(ctx, s.keys.DrawEntries(aid), cur, "", 20000)
		if err != nil {
			return nil, dep(err)
		}
		for i := 0; i+1 < len(kvs); i += 2 {
			if e, ok := parseEntry(kvs[i], kvs[i+1]); ok {
				out = append(out, e)
			}
		}
		if cur = next; cur == 0 {
			break
		}
	}
	slices.SortFunc(out, func(a, b domain.DrawEntry) int { return int(a.UID - b.UID) })
	return slices.CompactFunc(out, func(a, b domain.DrawEntry) bool { return a.UID == b.UID }), nil
}

// DrawProgress is the draw hash of an activity, with the number of its entries.
type DrawProgress struct {
	Cursor, Winners, Entries int64
	Status                   string // "" (not begun), domain.DrawDrawing or domain.DrawDone
}

// Draw reads the progress of activity aid's draw and counts its entries, in one round trip.
func (s *Store) Draw(ctx context.Context, aid int64) (DrawProgress, error) {
	var m *red.MapStringStringCmd
	var entries *red.IntCmd
	err := s.rds.PipelinedCtx(ctx, func(p redis.Pipeliner) error {
		m, entries = p.HGetAll(ctx, s.keys.Draw(aid)), p.HLen(ctx, s.keys.DrawEntries(aid))
		return nil
	})
	if err != nil {
		return DrawProgress{}, dep(err)
	}
	h := m.Val()
	n := func(f string) int64 { v, _ := strconv.ParseInt(h[f], 10, 64); return v }
	return DrawProgress{Cursor: n("cursor"), Winners: n("winners"), Entries: entries.Val(), Status: h["status"]}, nil
}

// DrawEntry reads uid's entry in activity aid's draw and what the draw made of it: status
// domain.StateQueued until the draw is done, then "won" (orderNo its order) or "lost";
// xerr.ErrEntryNotFound when there is none.
func (s *Store) DrawEntry(ctx context.Context, aid, uid int64) (e domain.DrawEntry, status, orderNo string,
	err error) {
	v, err := s.rds.HgetCtx(ctx, s.keys.DrawEntries(aid), strconv.FormatInt(uid, 10))
	if err == redis.Nil {
		return e, "", "", xerr.ErrEntryNotFound
	}
	if err != nil {
		return e, "", "", dep(err)
	}
	e, ok := parseEntry(strconv.FormatInt(uid, 10), v)
	if !ok {
		return e, "", "", fmt.Errorf("activity %d: bad entry %q of uid %d", aid, v, uid)
	}
	d, err := s.Draw(ctx, aid)
	if err != nil || d.Status != domain.DrawDone {
		return e, domain.StateQueued, "", err
	}
	ono, err := s.rds.HgetCtx(ctx, s.keys.Buyers(aid), ReqField(uid, e.RequestID))
	switch {
	case err == redis.Nil || ono == loserValue:
		return e, "lost", "", nil
	case err != nil:
		return domain.DrawEntry{}, "", "", dep(err)
	}
	return e, "won", s.orderNoOf(aid, ono), nil
}

// ServeDraw reserves a chunk of the draw's entrants in order, each exactly an ordinary
// reservation of that buyer with that request id (a chunk served twice changes nothing).
func (s *Store) ServeDraw(ctx context.Context, aid int64, items []domain.ReserveItem) ([]ReserveResult, error) {
	return s.reserveBatch(ctx, aid, items, time.Time{}, true)
}

// AdvanceDraw records a served chunk [from, to) of the draw: its winners count and its losers
// (a replay of a loser's entry is SOLD_OUT); done opens the activity to reservations in arrival
// order. errDrawMoved (as xerr BUSY) when another drawer recorded it first.
func (s *Store) AdvanceDraw(ctx context.Context, aid, from, to, winners int64,
	lost []domain.DrawEntry, done bool) error {
	keys := []string{s.keys.Stock(aid), s.keys.Draw(aid), s.keys.Buyers(aid)}
	args := drawAdvanceArgs{From: from, To: to, Winners: winners, Done: flag(done), Losers: make([]string, len(lost))}
	for i, e := range lost {
		args.Losers[i] = ReqField(e.UID, e.RequestID)
	}
	_, err := s.run(ctx, drawAdvanceScript, aid, keys, argvOf(args)...)
	if err == errDrawMoved {
		return ErrDrawMoved
	}
	return err
}

// DrawServed tells, for each of entries of activity aid's draw, whether the entrant holds an
// order under its entry's request id (a winner): the buyers hash's request id field names an
// order, not the loser value. One HMGET.
func (s *Store) DrawServed(ctx context.Context, aid int64, entries []domain.DrawEntry) ([]bool, error) {
	out := make([]bool, len(entries))
	if len(entries) == 0 {
		return out, nil
	}
	fields := make([]string, len(entries))
	for i, e := range entries {
		fields[i] = ReqField(e.UID, e.RequestID)
	}
	vals, err := s.rds.HmgetCtx(ctx, s.keys.Buyers(aid), fields...)
	if err != nil {
		return nil, dep(err)
	}
	for i, v := range vals {
		out[i] = v != "" && v != loserValue
	}
	return out, nil
}

// ErrDrawMoved: another drawer recorded the chunk (it holds the lease now).
var ErrDrawMoved = xerr.Sentinel(xerr.Busy, "another instance is drawing the activity")

// RestoreDrawEntries writes the draw's entries (restore_entries.lua) and, for a done draw, sets its
// losers' request ids to the loser value (restore_losers.lua) while the stock hash is absent,
// keys expiring at expireAt (unix s): the rebuild after a loss; ErrAlreadyWarm once the stock
// hash exists.
func (r Recovery) RestoreDrawEntries(ctx context.Context, aid, expireAt int64, entries, lost []domain.DrawEntry) error {
	s := r.s
	k := s.keys
	for batch := range slices.Chunk(entries, restoreBatch) {
		args := restoreEntriesArgs{ExpireAt: expireAt, Entries: make([]restoreEntryArgs, len(batch))}
		for i, e := range batch {
			args.Entries[i] = restoreEntryArgs{UID: e.UID, Value: entryValue(e)}
		}
		if err := s.restore(ctx, restoreEntriesScript, aid, []string{k.Stock(aid), k.DrawEntries(aid)}, args,
			len(batch)); err != nil {
			return err
		}
	}
	for batch := range slices.Chunk(lost, restoreBatch) {
		args := restoreLosersArgs{ExpireAt: expireAt, Losers: make([]string, len(batch))}
		for i, e := range batch {
			args.Losers[i] = ReqField(e.UID, e.RequestID)
		}
		if err := s.restore(ctx, restoreLosersScript, aid, []string{k.Stock(aid), k.Buyers(aid)}, args,
			len(batch)); err != nil {
			return err
		}
	}
	return nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
