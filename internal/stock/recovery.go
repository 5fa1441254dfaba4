package stock

import (
	"context"
	"slices"
	"strconv"

	"github.com/seckill/seckill/internal/domain"
)

// Recovery rebuilds and clears an activity's Redis book after a loss or a degrade (docs/DESIGN.md,
// "Failure stance").
type Recovery struct{ s *Store }

// Recovery returns the store's recovery operations.
func (s *Store) Recovery() Recovery { return Recovery{s: s} }

// Fence claims epoch for a loss rebuild of aid (fence.lua): no stock hash of a lower epoch is
// written after it; ErrAlreadyWarm when the stock hash exists. The key expires at expireAt (unix s).
func (r Recovery) Fence(ctx context.Context, aid, epoch, expireAt int64) error {
	s := r.s
	_, err := s.run(ctx, fenceScript, aid, []string{s.keys.Stock(aid), s.keys.Fence(aid)}, epoch, expireAt)
	return err
}

// Restore writes an activity's orders and its buyers' holdings (uid -> quantity) into Redis in
// batches of RestoreBatch, keys expiring at expireAt (unix s); ErrAlreadyWarm once the stock hash exists.
func (r Recovery) Restore(ctx context.Context, aid, expireAt int64, orders []Order, holdings map[int64]int64) error {
	s := r.s
	if err := domain.CheckActivityID(aid); err != nil {
		return err
	}
	k := s.keys
	head := []string{k.Stock(aid), k.Pending(aid), k.Orders(aid)}
	for i := 0; i < len(orders); i += RestoreBatch {
		batch := orders[i:min(i+RestoreBatch, len(orders))]
		keys := append([]string(nil), head...)
		args := []any{expireAt, len(batch), s.reqTTL}
		for _, o := range batch {
			keys = append(keys, k.Order(aid, o.OrderNo), k.User(aid, o.UID))
			args = append(args, o.OrderNo, o.UID, o.Quantity, o.State, o.ExpireAt, o.RequestID, o.CreatedAt,
				ReqField(o.RequestID))
		}
		if _, err := s.run(ctx, restoreScript, aid, keys, args...); err != nil {
			return err
		}
	}
	uids := make([]int64, 0, len(holdings))
	for uid, q := range holdings {
		if q > 0 {
			uids = append(uids, uid)
		}
	}
	slices.Sort(uids)
	for i := 0; i < len(uids); i += RestoreBatch {
		batch := uids[i:min(i+RestoreBatch, len(uids))]
		keys := append([]string(nil), head...)
		args := []any{expireAt, 0, s.reqTTL}
		for _, uid := range batch {
			keys = append(keys, k.User(aid, uid))
			args = append(args, holdings[uid])
		}
		if _, err := s.run(ctx, restoreScript, aid, keys, args...); err != nil {
			return err
		}
	}
	return nil
}

// Lost deletes the activity's stock hash while it is still of epoch: Redis was found to
// have lost acknowledged writes (relay.Acker), and the next call rebuilds the activity
// from MySQL. false: gone already or of another epoch (nothing deleted).
func (r Recovery) Lost(ctx context.Context, aid, epoch int64) (bool, error) {
	s := r.s
	res, err := s.run(ctx, lostScript, aid, []string{s.keys.Stock(aid)}, epoch)
	if err != nil {
		return false, err
	}
	return toInt(res, 0) == 1, nil
}

// WipeChunk is how many orders one wipe script call deletes.
const WipeChunk = 500

// Wipe deletes, while the stock hash is absent, what Redis still holds of the activity's orders
// and buyers (wipe.lua, WipeChunk orders a call); ErrAlreadyWarm once the stock hash exists.
func (r Recovery) Wipe(ctx context.Context, aid int64) error {
	s := r.s
	if err := domain.CheckActivityID(aid); err != nil {
		return err
	}
	keys, order, user := s.keys.wipe(aid)
	for {
		res, err := s.run(ctx, wipeScript, aid, keys, order, user, WipeChunk)
		if err != nil {
			return err
		}
		if toInt(res, 2) == 0 {
			return nil
		}
	}
}

// Forget deletes, with plain commands, whatever Redis still holds of an activity's book: stock
// hash, pending and orders sets, outbox, missing mark, and each listed order with its keys.
func (r Recovery) Forget(ctx context.Context, aid int64) error {
	s := r.s
	if err := domain.CheckActivityID(aid); err != nil {
		return err
	}
	k := s.keys
	nos, err := s.rds.ZrangeCtx(ctx, k.Orders(aid), 0, -1)
	if err != nil {
		return dep(err)
	}
	for _, no := range nos {
		vals, err := s.rds.HmgetCtx(ctx, k.Order(aid, no), "uid")
		if err != nil {
			return dep(err)
		}
		keys := []string{k.Order(aid, no)}
		if uid, err := strconv.ParseInt(vals[0], 10, 64); err == nil && uid > 0 {
			keys = append(keys, k.User(aid, uid)) // its request ids too
		}
		if _, err := s.rds.DelCtx(ctx, keys...); err != nil {
			return dep(err)
		}
	}
	_, err = s.rds.DelCtx(ctx, k.Stock(aid), k.Pending(aid), k.Orders(aid), k.Events(aid), k.Missing(aid))
	return dep(err)
}
