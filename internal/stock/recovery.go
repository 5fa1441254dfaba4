package stock

import (
	"context"
	"slices"

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
	_, err := s.run(ctx, fenceScript, aid, []string{s.keys.Stock(aid), s.keys.Fence(aid)},
		argvOf(fenceArgs{Epoch: epoch, ExpireAt: expireAt})...)
	return err
}

// Restore writes an activity's orders and its buyers' holdings (uid -> quantity) into Redis in
// batches of restoreBatch, keys expiring at expireAt (unix s); ErrAlreadyWarm once the stock hash exists.
func (r Recovery) Restore(ctx context.Context, aid, expireAt int64, orders []Order, holdings map[int64]int64) error {
	s := r.s
	if err := domain.CheckActivityID(aid); err != nil {
		return err
	}
	k := s.keys
	keys := []string{k.Stock(aid), k.Pending(aid), k.OrdersHash(aid), k.Buyers(aid)}
	for i := 0; i < len(orders); i += restoreBatch {
		batch := orders[i:min(i+restoreBatch, len(orders))]
		args := []any{expireAt, len(batch), s.reqTTL}
		for _, o := range batch {
			args = append(args, o.OrderNo, o.UID, o.Quantity, o.State, o.ExpireAt, o.RequestID, o.CreatedAt,
				ReqField(o.UID, o.RequestID))
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
	for i := 0; i < len(uids); i += restoreBatch {
		args := []any{expireAt, 0, s.reqTTL}
		for _, uid := range uids[i:min(i+restoreBatch, len(uids))] {
			args = append(args, heldField(uid), holdings[uid])
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
	res, err := s.run(ctx, lostScript, aid, []string{s.keys.Stock(aid)}, argvOf(lostArgs{Epoch: epoch})...)
	if err != nil {
		return false, err
	}
	return decoded[doneReply](res).Done == 1, nil
}

// Wipe deletes, while the stock hash is absent, what Redis still holds of the activity's orders
// and buyers (wipe.lua: the orders hash, the buyers hash and the pending zset, UNLINKed in one
// call); ErrAlreadyWarm once the stock hash exists.
func (r Recovery) Wipe(ctx context.Context, aid int64) error {
	s := r.s
	if err := domain.CheckActivityID(aid); err != nil {
		return err
	}
	k := s.keys
	_, err := s.run(ctx, wipeScript, aid, []string{k.Stock(aid), k.OrdersHash(aid), k.Buyers(aid), k.Pending(aid)})
	return err
}

// Forget deletes, with plain commands, whatever Redis still holds of an activity's book: stock
// hash, pending zset, orders and buyers hashes, outbox and missing mark (UNLINK: a large key is
// freed off Redis's main thread).
func (r Recovery) Forget(ctx context.Context, aid int64) error {
	s := r.s
	if err := domain.CheckActivityID(aid); err != nil {
		return err
	}
	k := s.keys
	_, err := s.rds.UnlinkCtx(ctx, k.Stock(aid), k.Pending(aid), k.OrdersHash(aid), k.Buyers(aid), k.Events(aid),
		k.Missing(aid))
	return dep(err)
}
