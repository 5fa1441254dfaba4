package stock

import "context"

// ReserveAs runs reserve.lua with a given order number (Reserve draws a fresh one), so a
// test can make one collide.
func (s *Store) ReserveAs(ctx context.Context, aid, uid, qty int64, requestID, orderNo string) ([]any, error) {
	k := s.keys
	return s.run(ctx, reserveScript, []string{k.Stock(aid), k.Req(aid, uid, requestID),
		k.Order(aid, orderNo), k.User(aid, uid), k.Pending(aid), k.Orders(aid), k.Events(aid)},
		aid, orderNo, uid, qty, requestID, 0, k.Order(aid, ""), s.wantEntry())
}

// ErrOrderNoTaken is errOrderNoTaken, for tests.
var ErrOrderNoTaken = errOrderNoTaken
