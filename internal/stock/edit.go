package stock

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
)

// windowPrefix starts a message on the stock-back channel that says an activity's window
// (and the rest of its copy) changed: WindowMessage, ParseMessage.
const windowPrefix = "w:"

// WindowMessage is the stock-back channel's message that activity aid was edited: every
// gateway drops the window it cached for it ("Editing an activity before its start").
func WindowMessage(aid int64) string { return windowPrefix + strconv.FormatInt(aid, 10) }

// ParseMessage reads a stock-back channel message: the activity id, and whether it is an
// edit's (WindowMessage) rather than stock coming back (the bare id).
func ParseMessage(payload string) (aid int64, window bool, err error) {
	if rest, ok := strings.CutPrefix(payload, windowPrefix); ok {
		payload, window = rest, true
	}
	aid, err = strconv.ParseInt(payload, 10, 64)
	return aid, window, err
}

// Edit is what an edit before the start rewrites of a warmed activity's copy.
type Edit struct {
	ActivityID int64
	SkuID      int64
	Name       string
	Start      int64 // unix seconds
	End        int64 // unix seconds
	Limit      int64
	PayTimeout int64 // seconds
	ExpireAt   int64 // unix seconds: end + pay timeout + grace
	DrawAt     int64 // ms, 0: no draw
	Price      int64
}

// Edit rewrites the warmed copy of an activity that has not started by Redis's clock
// (edit_meta.lua) and tells every gateway to drop its cached window, warm or not. warm: the
// copy was rewritten; false, nil: the activity is not warm (nothing written). xerr.ErrStarted
// once it started: nothing written.
func (s *Store) Edit(ctx context.Context, e Edit) (warm bool, err error) {
	if err := domain.CheckActivityID(e.ActivityID); err != nil {
		return false, err
	}
	aid := e.ActivityID
	_, err = s.run(ctx, editMetaScript, aid,
		[]string{s.keys.Stock(aid), s.keys.AdjustKeys(aid), s.keys.Fence(aid)},
		e.Start, e.End, e.Limit, e.PayTimeout, e.SkuID, e.ExpireAt, e.Name, e.DrawAt, e.Price,
		s.keys.StockBack(), WindowMessage(aid))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNotWarm):
		return false, nil
	case xerr.CodeOf(err) == xerr.InvalidArgument:
		return false, xerr.New(xerr.InvalidArgument, "start_time must be in the future")
	}
	return false, err
}
