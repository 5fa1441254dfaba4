package stock

import (
	"context"
	"fmt"
	"slices"

	"github.com/seckill/seckill/internal/domain"
)

// Recovery rebuilds and clears an activity's Redis book after a loss or a degrade (docs/DESIGN.md,
// "Failure stance").
type Recovery struct{ s *Store }

// Recovery returns the store's recovery operations.
func (s *Store) Recovery() Recovery { return Recovery{s: s} }

// ClaimEpoch claims epoch for a loss rebuild of aid (claim_epoch.lua): no stock hash of a lower
// epoch is written after it; ErrAlreadyWarm when the stock hash exists. The claim key expires at
// expireAt (unix s).
func (r Recovery) ClaimEpoch(ctx context.Context, aid, epoch, expireAt int64) error {
	s := r.s
	_, err := s.run(ctx, claimEpochScript, aid, []string{s.keys.Stock(aid), s.keys.epochClaim(aid)},
		argvOf(claimEpochArgs{Epoch: epoch, ExpireAt: expireAt})...)
	return err
}

// Restore replaces, while the stock hash is absent, what Redis holds of an activity's orders and
// buyers: first wipe.lua deletes what is left of them (the orders hash, the buyers hash and the
// pending zset, UNLINKed in one call: a partial rollback may have kept orders MySQL has in other
// states, or lacks), then it writes the orders (restore.lua) and the buyers' holdings, uid ->
// quantity (restore_holdings.lua), in batches of restoreBatch, keys expiring at expireAt
// (unix s). ErrAlreadyWarm once the stock hash exists: nothing more is written.
func (r Recovery) Restore(ctx context.Context, aid, expireAt int64, orders []domain.Order,
	holdings map[int64]int64) error {
	s := r.s
	if err := domain.CheckActivityID(aid); err != nil {
		return err
	}
	// The keys name an order by its short number, made its order_no again with this store's
	// order key: a number that key did not tag would come back as another. Checked before any write.
	for _, o := range orders {
		if a, ok := domain.VerifyOrderNo(o.OrderNo, s.orderKey); !ok || a != aid {
			return fmt.Errorf("activity %d: order %s is not one of its numbers under this order key", aid, o.OrderNo)
		}
	}
	k := s.keys
	if _, err := s.run(ctx, wipeScript, aid, []string{k.Stock(aid), k.OrdersHash(aid), k.Buyers(aid),
		k.Pending(aid)}); err != nil {
		return err
	}
	for batch := range slices.Chunk(orders, restoreBatch) {
		args := restoreArgs{ExpireAt: expireAt, Orders: make([]restoreOrderArgs, len(batch))}
		for i, o := range batch {
			args.Orders[i] = restoreOrderArgs{No: shortNo(o.OrderNo), UID: o.UID, Qty: o.Quantity, State: o.State,
				ExpireAtMs: o.ExpireAt, RequestID: o.RequestID, CreatedMs: o.CreatedAt,
				ReqField: ReqField(o.UID, o.RequestID)}
		}
		keys := []string{k.Stock(aid), k.Pending(aid), k.OrdersHash(aid), k.Buyers(aid)}
		if err := s.restore(ctx, restoreScript, aid, keys, args, len(batch)); err != nil {
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
	for batch := range slices.Chunk(uids, restoreBatch) {
		args := restoreHoldingsArgs{ExpireAt: expireAt, Holdings: make([]restoreHoldingArgs, len(batch))}
		for i, uid := range batch {
			args.Holdings[i] = restoreHoldingArgs{HeldField: heldField(uid), Qty: holdings[uid]}
		}
		if err := s.restore(ctx, restoreHoldingsScript, aid, []string{k.Stock(aid), k.Buyers(aid)}, args,
			len(batch)); err != nil {
			return err
		}
	}
	return nil
}

// restore runs one of the rebuild's restore scripts with args (an arguments struct) for a batch
// of n groups: an error when the script took another number of them (restoreReply).
func (s *Store) restore(ctx context.Context, sc *script, aid int64, keys []string, args any, n int) error {
	res, err := s.run(ctx, sc, aid, keys, argvOf(args)...)
	if err != nil {
		return err
	}
	if got := decoded[restoreReply](res).Written; got != int64(n) {
		return fmt.Errorf("stock script %s: %d of a batch of %d written", sc.name, got, n)
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

// Forget deletes, with plain commands, whatever Redis still holds of an activity's book: stock
// hash, pending zset, orders and buyers hashes, outbox and missing flag (UNLINK: a large key is
// freed off Redis's main thread).
func (r Recovery) Forget(ctx context.Context, aid int64) error {
	s := r.s
	if err := domain.CheckActivityID(aid); err != nil {
		return err
	}
	k := s.keys
	_, err := s.rds.UnlinkCtx(ctx, k.Stock(aid), k.Pending(aid), k.OrdersHash(aid), k.Buyers(aid), k.Events(aid),
		k.missing(aid))
	return dep(err)
}
