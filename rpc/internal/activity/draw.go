package activity

import (
	"context"
	"fmt"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/model"
)

// EntrySource reads an activity's draw entries from the book of record (model.DrawEntryModel).
type EntrySource interface {
	FindByActivity(ctx context.Context, activityID int64) ([]*model.DrawEntry, error)
}

// DrawAtMs is when activity a's draw is decided (unix ms; 0: it has no draw).
func DrawAtMs(a model.Activity) int64 {
	if a.DrawSeconds == 0 {
		return 0
	}
	return (a.StartTime + int64(a.DrawSeconds)) * 1000
}

// restoreEntries writes the draw's entries back into Redis in a loss rebuild, and for a done
// draw its losers' values: the entrants with no order under their entry's request id.
func (l *Loader) restoreEntries(ctx context.Context, rec *Record, keysExp int64, orders []domain.Order) error {
	a := rec.Activity
	if a.DrawSeconds == 0 || l.Entries == nil {
		return nil
	}
	rows, err := l.Entries.FindByActivity(ctx, int64(a.Id))
	if err != nil {
		return DBError(fmt.Errorf("draw entries of activity %d: %w", a.Id, err))
	}
	type key struct {
		uid int64
		rid string
	}
	ordered := map[key]bool{}
	for _, o := range orders {
		ordered[key{o.UID, o.RequestID}] = true
	}
	entries := make([]domain.DrawEntry, len(rows))
	var lost []domain.DrawEntry
	for i, r := range rows {
		entries[i] = domain.DrawEntry{UID: int64(r.Uid), Qty: int64(r.Quantity), RequestID: r.RequestId,
			EventID: r.EventId}
		if a.DrawDoneAt > 0 && !ordered[key{entries[i].UID, entries[i].RequestID}] {
			lost = append(lost, entries[i])
		}
	}
	if len(entries) == 0 {
		return nil
	}
	return l.Store.Recovery().RestoreDrawEntries(ctx, int64(a.Id), keysExp, entries, lost)
}
