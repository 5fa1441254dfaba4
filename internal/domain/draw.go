package domain

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"slices"
	"strconv"
)

// The opening draw's states, as its progress hash in Redis records them and the views show them
// (docs/DESIGN.md, "The opening draw"); before the draw begins it has none (the views call that
// "pending": rpc/internal/logic).
const (
	DrawDrawing = "drawing"
	DrawDone    = "done"
)

// A DrawEntry is one buyer's entry in an activity's opening draw (docs/DESIGN.md, "The opening
// draw"): Redis's entries hash and MySQL's draw_entry hold it.
type DrawEntry struct {
	UID       int64
	Qty       int64
	RequestID string
	EventID   string // the entry's outbox entry id
}

// DrawOrder is the draw's order of entries: ascending by each uid's key, HMAC-SHA256 keyed with
// the seed's bytes over the uid in decimal ASCII, as byte strings (by uid on the impossible
// tie). The same entries and seed give the same order, whatever order they come in
// (rpc/internal/draw serves it; anyone holding the audit recomputes it).
func DrawOrder(entries []DrawEntry, seed []byte) []DrawEntry {
	type keyed struct {
		key [sha256.Size]byte
		e   DrawEntry
	}
	ks := make([]keyed, len(entries))
	mac := hmac.New(sha256.New, seed)
	var num [20]byte
	for i, e := range entries {
		mac.Reset()
		mac.Write(strconv.AppendInt(num[:0], e.UID, 10))
		mac.Sum(ks[i].key[:0])
		ks[i].e = e
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if c := bytes.Compare(a.key[:], b.key[:]); c != 0 {
			return c
		}
		return cmp.Compare(a.e.UID, b.e.UID)
	})
	out := make([]DrawEntry, len(ks))
	for i := range ks {
		out[i] = ks[i].e
	}
	return out
}
