package stock

import (
	"context"
)

// ReserveAs runs reserve.lua for one item with a given order number (Reserve draws a fresh
// one), so a test can make one collide: the script's whole reply, or the item's refusal.
func (s *Store) ReserveAs(ctx context.Context, aid, uid, qty int64, requestID, orderNo string) ([]any, error) {
	res, err := s.run(ctx, reserveScript, aid, s.keys.reserve(aid), aid, 0, s.wantEntry(), "", "0",
		orderNo, uid, qty, requestID, HeldField(uid), ReqField(uid, requestID))
	if err != nil {
		return nil, err
	}
	if code, ok := res[reserveHead].(int64); ok && code < 0 {
		return nil, codeError(code)
	}
	return res, nil
}

// ReserveBatchAs runs reserve.lua once for items with the given order numbers: each item's code
// (0 reserved, 1 a replay).
func (s *Store) ReserveBatchAs(ctx context.Context, aid int64, items []ReserveItem, orderNos []string) ([]int64,
	error) {
	args := []any{aid, 0, s.wantEntry(), "", "0"}
	qty := make([]int64, len(items))
	for i, it := range items {
		args = append(args, orderNos[i], it.UID, it.Qty, it.RequestID, HeldField(it.UID), ReqField(it.UID, it.RequestID))
		qty[i] = it.Qty
	}
	res, err := s.run(ctx, reserveScript, aid, s.keys.reserve(aid), args...)
	if err != nil {
		return nil, err
	}
	replies, err := parseReserve(res, orderNos, qty, s.entries)
	if err != nil {
		return nil, err
	}
	codes := make([]int64, len(items))
	for i, r := range replies {
		codes[i] = r.code
	}
	return codes, nil
}

// ReserveKeys is Keys.reserve, for tests.
func (k Keys) ReserveKeys(aid int64) []string {
	return k.reserve(aid)
}

// ErrOrderNoTaken is errOrderNoTaken, for tests.
var ErrOrderNoTaken = errOrderNoTaken

// PackOrder is an order as the orders hash holds it (packed.pack), for tests.
func PackOrder(o Order, cseq, useq int64, er, es string) string {
	return packed{Order: o, Cseq: cseq, Useq: useq, Er: er, Es: es}.pack()
}

// UnpackOrder is unpackOrder, for tests.
func UnpackOrder(aid int64, orderNo, v string) (o Order, cseq, useq int64, er, es string, ok bool) {
	p, ok := unpackOrder(aid, orderNo, v)
	return p.Order, p.Cseq, p.Useq, p.Er, p.Es, ok
}

// EntryLua is scripts/entry.lua, for tests.
var EntryLua = entryLua
