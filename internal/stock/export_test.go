package stock

import "context"

// ReserveAs runs reserve.lua with a given order number (Reserve draws a fresh one), so a
// test can make one collide.
func (s *Store) ReserveAs(ctx context.Context, aid, uid, qty int64, requestID, orderNo string) ([]any, error) {
	keys, orderPrefix := s.keys.reserve(aid, uid, requestID, orderNo)
	return s.run(ctx, reserveScript, aid, keys, aid, orderNo, uid, qty, requestID, 0, orderPrefix, s.wantEntry(), "")
}

// ReserveKeys is Keys.reserve, for tests.
func (k Keys) ReserveKeys(aid, uid int64, requestID, orderNo string) ([]string, string) {
	return k.reserve(aid, uid, requestID, orderNo)
}

// ErrOrderNoTaken is errOrderNoTaken, for tests.
var ErrOrderNoTaken = errOrderNoTaken
