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

// ReserveKeys is Keys.reserve, for tests.
func (k Keys) ReserveKeys(aid int64) ([]string, string, string) {
	return k.reserve(aid)
}

// ErrOrderNoTaken is errOrderNoTaken, for tests.
var ErrOrderNoTaken = errOrderNoTaken
