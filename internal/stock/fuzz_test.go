package stock_test

import (
	"context"
	"errors"
	"testing"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
)

// FuzzStoreArguments calls the Store (and so the scripts) with fuzzed arguments against
// the real Redis, under the test's own key prefix: whatever the arguments, every answer is
// a success or a typed business error (never a script or Redis error, never an unknown
// code), and the activity's invariant remaining + locked + sold == total holds after each.
func FuzzStoreArguments(f *testing.F) {
	env := stocktest.New(f)
	aid := env.Warm(stocktest.Spec{Total: 50, Limit: 3})
	ctx := context.Background()
	var orders []string // issued order numbers, so that pay/cancel meet real orders
	f.Add(uint8(0), int64(0), int64(1), int64(1), "request-0001", "", int64(0), uint8(0))
	f.Add(uint8(1), int64(0), int64(1), int64(1), "", "", int64(0), uint8(0))
	f.Add(uint8(2), int64(0), int64(2), int64(1), "", "", int64(0), uint8(0))
	f.Add(uint8(3), int64(0), int64(0), int64(0), "", "", int64(-1000000000), uint8(0))
	f.Add(uint8(0), int64(-1), int64(-5), int64(0), "bad id!", "1-zz", int64(0), uint8(9))
	f.Add(uint8(1), int64(0), int64(1), int64(0), "", "1-17000000000001234567890abcdef0123", int64(0), uint8(0))
	f.Fuzz(func(t *testing.T, op uint8, aidDelta, uid, qty int64, reqID, orderNo string, delta int64, pick uint8) {
		env.T = t
		a := aid + aidDelta // mostly the warm activity; others are cold or invalid
		if orderNo == "" && len(orders) > 0 {
			orderNo = orders[int(pick)%len(orders)]
		}
		var err error
		switch op % 5 {
		case 0:
			var res domain.Reservation
			res, err = stocktest.Reserve(ctx, env.Store, a, uid, qty, reqID)
			if err == nil && !res.Replay {
				orders = append(orders, res.OrderNo)
			}
		case 1:
			_, err = env.Store.Confirm(ctx, orderNo, uid)
		case 2:
			_, err = env.Store.Release(ctx, orderNo, uid, domain.StateCancelled)
		case 3:
			_, _, err = env.Store.Adjust(ctx, a, delta, "", "")
		case 4:
			_, err = env.Store.Order(ctx, orderNo)
		}
		if err != nil {
			var e *xerr.Error
			if !errors.As(err, &e) || e.Code == xerr.Internal {
				t.Fatalf("op %d (activity %d, uid %d, qty %d, request %q, order %q, delta %d): untyped error %v",
					op%5, a, uid, qty, reqID, orderNo, delta, err)
			}
		}
		env.CheckInvariant(aid)
	})
}
