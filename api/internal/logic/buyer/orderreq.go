package buyer

import (
	"context"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/validate"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// orderReq is a request about one of the caller's orders: the user from the token (never
// from the client), the order number checked.
func orderReq(ctx context.Context, orderNo string) (*inventoryclient.OrderReq, error) {
	uid, err := auth.UID(ctx)
	if err != nil {
		return nil, err
	}
	if err := validate.OrderNo(orderNo); err != nil {
		return nil, err
	}
	return &inventoryclient.OrderReq{OrderNo: orderNo, Uid: uid}, nil
}
