package logic

import (
	"context"
	"github.com/seckill/seckill/internal/domain"

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
	res, err := l.svcCtx.Book.ReserveBatch(l.ctx, in.ActivityId, []domain.ReserveItem{{UID: in.Uid, Qty: in.Quantity,
		RequestID: in.RequestId, Addr: in.ClientAddr}})
	if err != nil {
		return nil, err
	}
	price, err := priceFor(l.ctx, l.svcCtx.Prices, in.ActivityId, res[:1])
	if err != nil {
		return nil, err
	}
	return toReserveResp(res[0].Reservation, price, res[0].Err)
}
