package stock

import (
	"context"
	"strconv"
)

// ReserveAs runs reserve.lua for one item with a given order number (Reserve draws a fresh
// one), so a test can make one collide: the item's reply.
func (s *Store) ReserveAs(ctx context.Context, aid, uid, qty int64, requestID, orderNo string) ([]any, error) {
	head, order, user := s.keys.reserve(aid)
	keys := append(head, order+orderNo, user+strconv.FormatInt(uid, 10))
	res, err := s.run(ctx, reserveScript, aid, keys, aid, 0, order, s.wantEntry(), "", "0",
		orderNo, uid, qty, requestID, ReqField(requestID))
	if err != nil {
		return nil, err
	}
	r, _ := res[1].([]any)
	if code := toInt(r, 0); code < 0 {
		return nil, codeError(code)
	}
	return r, nil
}

// ReserveBatchAs runs reserve.lua once for items with the given order numbers: each item's code.
func (s *Store) ReserveBatchAs(ctx context.Context, aid int64, items []ReserveItem, orderNos []string) ([]int64,
	error) {
	head, order, user := s.keys.reserve(aid)
	args := []any{aid, 0, order, s.wantEntry(), "", "0"}
	for i, it := range items {
		head = append(head, order+orderNos[i], user+strconv.FormatInt(it.UID, 10))
		args = append(args, orderNos[i], it.UID, it.Qty, it.RequestID, ReqField(it.RequestID))
	}
	res, err := s.run(ctx, reserveScript, aid, head, args...)
	if err != nil {
		return nil, err
	}
	codes := make([]int64, len(items))
	for i := range items {
		r, _ := res[1+i].([]any)
		codes[i] = toInt(r, 0)
	}
	return codes, nil
}

// ReserveKeys is Keys.reserve, for tests.
func (k Keys) ReserveKeys(aid int64) ([]string, string, string) {
	return k.reserve(aid)
}

// ErrOrderNoTaken is errOrderNoTaken, for tests.
var ErrOrderNoTaken = errOrderNoTaken
