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
// (and the rest of its copy) changed: windowMessage, ParseMessage.
const windowPrefix = "w:"

// windowMessage is the stock-back channel's message that activity aid was edited: every
// gateway drops the window it cached for it ("Editing an activity before its start").
func windowMessage(aid int64) string { return windowPrefix + strconv.FormatInt(aid, 10) }

// ParseMessage reads a stock-back channel message: the activity id, and whether it is an
// edit's (windowMessage) rather than stock coming back (the bare id).
func ParseMessage(payload string) (aid int64, window bool, err error) {
	if rest, ok := strings.CutPrefix(payload, windowPrefix); ok {
		payload, window = rest, true
	}
	aid, err = strconv.ParseInt(payload, 10, 64)
	return aid, window, err
}

// Edit rewrites the warmed copy of activity e.ActivityID that has not started by Redis's clock
// (edit_meta.lua: sku, name, window, limit, pay timeout, keys' expiry, draw time and price; the
// counters, Epoch and Drawn are not e's to change) and tells every gateway to drop its cached
// window, warm or not. warm: the copy was rewritten; false, nil: the activity is not warm
// (nothing written). xerr.ErrStarted once it started: nothing written.
func (s *Store) Edit(ctx context.Context, e domain.Activity) (warm bool, err error) {
	if err := domain.CheckActivityID(e.ActivityID); err != nil {
		return false, err
	}
	aid := e.ActivityID
	_, err = s.run(ctx, editMetaScript, aid,
		[]string{s.keys.Stock(aid), s.keys.adjustKeys(aid), s.keys.epochClaim(aid)},
		argvOf(editMetaArgs{activityArgs: activityArgs{Start: e.Start, End: e.End, Limit: e.Limit,
			PayTimeout: e.PayTimeout, SkuID: e.SkuID, ExpireAt: e.ExpireAt, Name: e.Name, DrawAt: e.DrawAt,
			Price: e.Price}, StockBack: s.keys.StockBack(), Message: windowMessage(aid)})...)
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
