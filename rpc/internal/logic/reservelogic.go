package logic

import (
	"context"
	"github.com/seckill/seckill/internal/stock"

	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"
)

type ReserveLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

func NewReserveLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ReserveLogic {
	return &ReserveLogic{ctx: ctx, svcCtx: svcCtx}
}

func (l *ReserveLogic) Reserve(in *inventory.ReserveReq) (*inventory.ReserveResp, error) {
	res, err := l.svcCtx.Book.ReserveBatch(l.ctx, in.ActivityId, []stock.ReserveItem{{UID: in.Uid, Qty: in.Quantity,
		RequestID: in.RequestId, Addr: in.ClientAddr}})
	if err != nil {
		return toReserveResp(stock.Reservation{}, err)
	}
	return toReserveResp(res[0].Reservation, res[0].Err)
}
