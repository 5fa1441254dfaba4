package writer

import (
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/model"
)

// recordEntry records a buyer's entry in an activity's draw once (draw_entry, one row per
// buyer): a redelivered entered event changes nothing.
func (t *txn) recordEntry(ev event.Event) error {
	inserted, err := t.m.entries.InsertIgnore(t.ctx, t.s, &model.DrawEntry{ActivityId: uint64(ev.ActivityID),
		Uid: uint64(ev.UID), Quantity: uint64(ev.Quantity), RequestId: ev.RequestID, EventId: ev.EventID,
		EnteredAt: ev.AtMs})
	if err != nil {
		return err
	}
	if !inserted {
		t.res.duplicates++
		return nil
	}
	t.res.applied[event.Entered]++
	return nil
}
