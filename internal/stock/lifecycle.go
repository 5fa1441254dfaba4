package stock

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/xerr"
)

// Warmup creates the stock hash if absent and records the activity as active.
// It never overwrites live stock: created is false when the hash already existed.
func (s *Store) Warmup(ctx context.Context, m domain.Activity) (created bool, remaining int64, err error) {
	if m.ActivityID <= 0 || m.Total < 0 || m.Remaining < 0 || m.Locked < 0 || m.Sold < 0 ||
		m.Remaining+m.Locked+m.Sold != m.Total || m.End <= m.Start || m.Limit < 1 || m.PayTimeout < 1 ||
		m.Epoch < 0 || m.Price < 0 || m.Price > domain.MaxPrice {
		return false, 0, xerr.Newf(xerr.InvalidArgument, "bad activity for warm-up: %+v", m)
	}
	// The script checks it too; bounding it here names the activity in the error.
	if now := time.Now(); m.ExpireAt <= now.Unix() || m.ExpireAt > now.Add(maxKeyLife).Unix() {
		return false, 0, xerr.Newf(xerr.InvalidArgument,
			"activity %d: keys' expire-at %d is not within %v of now", m.ActivityID, m.ExpireAt, maxKeyLife)
	}
	keys := []string{s.keys.Stock(m.ActivityID), s.keys.epochClaim(m.ActivityID)}
	res, err := s.run(ctx, warmupScript, m.ActivityID, keys,
		argvOf(warmupArgs{Total: m.Total, Remaining: m.Remaining, Locked: m.Locked, Sold: m.Sold,
			activityArgs: activityArgs{Start: m.Start, End: m.End, Limit: m.Limit, PayTimeout: m.PayTimeout,
				SkuID: m.SkuID, ExpireAt: m.ExpireAt, Name: m.Name, DrawAt: m.DrawAt, Price: m.Price},
			Epoch: m.Epoch, Drawn: flag(m.Drawn)})...)
	if err != nil {
		return false, 0, err
	}
	r := decoded[warmupReply](res)
	return r.Created == 1, r.Remaining, nil
}

// StockBack announces that an activity's stock may have come back (after a rebuild):
// gateways drop their sold-out mark for it (docs/DESIGN.md, "Sold-out at the edge").
func (s *Store) StockBack(ctx context.Context, aid int64) error {
	_, err := s.rds.PublishCtx(ctx, s.keys.StockBack(), strconv.FormatInt(aid, 10))
	return dep(err)
}

// Confirm pays a reserved order of uid (>= 1; another user's order is ORDER_NOT_FOUND). The
// entries are those the answer waits on: the change's, or a repeat's still in the outbox.
func (s *Store) Confirm(ctx context.Context, orderNo string, uid int64) ([]Entry, error) {
	aid, err := s.orderActivity(orderNo, uid)
	if err != nil {
		return nil, err
	}
	k := s.keys
	res, err := s.run(ctx, confirmScript, aid, []string{k.Stock(aid), k.OrdersHash(aid), k.Events(aid)},
		argvOf(confirmArgs{ActivityID: aid, OrderNo: orderNo, Short: shortNo(orderNo), UID: uid,
			TraceParent: event.TraceParent(ctx)})...)
	if err != nil {
		return nil, err
	}
	return changeEntries(aid, res)
}

// changeEntries are the entries an order script's reply res (changeReply) holds: the change's,
// or, when it made none, the repeat's unsent ones.
func changeEntries(aid int64, res []any) ([]Entry, error) {
	r := decoded[changeReply](res)
	if r.EntryID == "" { // a repeat: no new entry
		return unsentList(aid, r.Entry)
	}
	return written(aid, r.EntryID, r.Entry)
}

// Release cancels (target domain.StateCancelled) or expires (domain.StateExpired, only once due) a
// reserved order of uid (>= 1; another user's order is ORDER_NOT_FOUND). Repeating it is not
// an error. The entries are those the answer waits on (Confirm).
func (s *Store) Release(ctx context.Context, orderNo string, uid int64, target string) ([]Entry, error) {
	aid, err := s.orderActivity(orderNo, uid)
	if err != nil {
		return nil, err
	}
	if target != domain.StateCancelled && target != domain.StateExpired {
		return nil, xerr.Newf(xerr.InvalidArgument, "bad release target %q", target)
	}
	// The script answers another user's order, or an absent one, ORDER_NOT_FOUND (not warm
	// when the stock hash is gone as well: a Redis loss) without touching a buyer's holding.
	return s.release(ctx, aid, orderNo, uid, target)
}

func (s *Store) release(ctx context.Context, aid int64, orderNo string, owner int64, target string) ([]Entry,
	error) {
	k := s.keys
	res, err := s.run(ctx, releaseScript, aid, []string{k.Stock(aid), k.OrdersHash(aid), k.Buyers(aid),
		k.Events(aid)}, argvOf(releaseArgs{ActivityID: aid, OrderNo: orderNo, Short: shortNo(orderNo), UID: owner,
		Target: target, StockBack: k.StockBack(), TraceParent: event.TraceParent(ctx), HeldField: heldField(owner)})...)
	if err != nil {
		return nil, err
	}
	return changeEntries(aid, res) // no entry id: already in the target state
}

// expireScan is how many pending members ExpireDue reads at a time (a member holds one
// reservation batch's order numbers, up to MaxReserveBatch).
const expireScan = 64

// ExpireDue releases up to limit reserved orders whose expire_at has passed. The pending zset
// holds one member per reservation batch (its order numbers, scored by their common
// expire-at): the due members are taken in score order, about limit orders a script call,
// until limit orders expired or no member is due; the script passes over orders no longer
// reserved and removes a member once none of its orders is.
func (s *Store) ExpireDue(ctx context.Context, aid int64, limit int) ([]string, error) {
	if err := domain.CheckActivityID(aid); err != nil {
		return nil, err
	}
	if limit < 1 || limit > MaxExpireBatch {
		return nil, xerr.Newf(xerr.InvalidArgument, "limit must be 1..%d", MaxExpireBatch)
	}
	k := s.keys
	now, err := s.now(ctx)
	if err != nil {
		return nil, err
	}
	keys := []string{k.Stock(aid), k.Pending(aid), k.OrdersHash(aid), k.Buyers(aid), k.Events(aid)}
	var out []string
	for len(out) < limit {
		want := limit - len(out)
		due, err := s.rds.ZrangebyscoreWithScoresAndLimitCtx(ctx, k.Pending(aid), 0, now, 0, min(want, expireScan))
		if err != nil {
			return out, dep(err)
		}
		if len(due) == 0 {
			if out == nil {
				// Nothing due, or nothing at all: a lost activity has no pending set either.
				if _, err := s.Stock(ctx, aid); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
		args := expireDueArgs{ActivityID: aid, StockBack: k.StockBack(), HeldPrefix: heldPrefix, Limit: want}
		for n, d := range due {
			if n > 0 && want <= 0 {
				break
			}
			args.Members = append(args.Members, s.expireMember(aid, d.Key))
			want -= strings.Count(d.Key, " ") + 1
		}
		res, err := s.run(ctx, expireDueScript, aid, keys, argvOf(args)...)
		if err != nil {
			return out, err
		}
		for i := fields[expireDueReply](); i < len(res); i++ { // the expired orders' numbers
			out = append(out, toString(res, i))
		}
		if h := decoded[expireDueReply](res); h.Expired == 0 && h.MembersRemoved == 0 {
			return out, nil // nothing expired and no member done: none due after all
		}
	}
	return out, nil
}

// expireMember is expire_due.lua's group of the pending member shorts (a reservation batch's
// short numbers): it and the order_nos its events carry.
func (s *Store) expireMember(aid int64, shorts string) expireMemberArgs {
	nos := strings.Fields(shorts)
	for i, short := range nos {
		nos[i] = s.orderNoOf(aid, short)
	}
	return expireMemberArgs{Shorts: shorts, OrderNos: strings.Join(nos, " ")}
}

// Adjust adds (delta > 0) or withdraws (delta < 0) sellable stock, under a merchant's
// Idempotency-Key (key "mid:key", "" for none) and the request's fingerprint fp, recorded in the
// same script as the change: the key again answers the first result without applying it again,
// with another fp xerr.ErrIdempotencyConflict. The
// entries are those the answer waits on: the change's, or the first's still in the outbox.
func (s *Store) Adjust(ctx context.Context, aid, delta int64, key, fp string) (domain.Counters, []Entry, error) {
	if err := firstErr(domain.CheckActivityID(aid), domain.CheckDelta(delta)); err != nil {
		return domain.Counters{}, nil, err
	}
	res, err := s.run(ctx, adjustScript, aid, []string{s.keys.Stock(aid), s.keys.Events(aid), s.keys.adjustKeys(aid)},
		argvOf(adjustArgs{ActivityID: aid, Delta: delta, StockBack: s.keys.StockBack(),
			TraceParent: event.TraceParent(ctx), IdempotencyKey: key, Fingerprint: fp})...)
	if err != nil {
		return domain.Counters{}, nil, err
	}
	r := decoded[adjustReply](res)
	var es []Entry
	if r.Code == codeReplay {
		es, err = unsentList(aid, r.EntryID)
	} else {
		id, _ := r.EntryID.(string)
		es, err = written(aid, id, r.Entry)
	}
	if err != nil {
		return domain.Counters{}, nil, err
	}
	return domain.Counters{Total: r.Total, Remaining: r.Remaining, Locked: r.Locked, Sold: r.Sold}, es, nil
}
