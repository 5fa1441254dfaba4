package stock

import (
	"context"
	"errors"
	"time"

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

// ReserveBatch reserves items of activity aid in order, each with the answer a single ReserveBy
// would give; err is a failure of the whole batch (not warm, lease lapsed, Redis down).
func (s *Store) ReserveBatch(ctx context.Context, aid int64, items []ReserveItem,
	sellBy time.Time) ([]ReserveResult, error) {
	out := make([]ReserveResult, len(items))
	for i, it := range items {
		res, err := s.ReserveBy(ctx, aid, it.UID, it.Qty, it.RequestID, sellBy)
		if batchFailure(err) {
			return nil, err
		}
		out[i] = ReserveResult{Reservation: res, Err: err}
	}
	return out, nil
}

// batchFailure tells whether err fails a whole batch rather than answering one item.
func batchFailure(err error) bool {
	return errors.Is(err, ErrNotWarm) || errors.Is(err, ErrLeaseLapsed) || errors.Is(err, ErrFenced) ||
		xerr.IsDependencyFailure(err)
}
