package logic

import (
	"context"

	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"
)

type ReserveBatchLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

func NewReserveBatchLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ReserveBatchLogic {
	return &ReserveBatchLogic{ctx: ctx, svcCtx: svcCtx}
}

func (l *ReserveBatchLogic) ReserveBatch(in *inventory.ReserveBatchReq) (*inventory.ReserveBatchResp, error) {
	items, err := toReserveItems(in)
	if err != nil {
		return nil, err
	}
	res, err := l.svcCtx.Book.ReserveBatch(l.ctx, in.ActivityId, items)
	return toReserveBatchResp(l.ctx, l.svcCtx.Prices, in.ActivityId, res, err)
}
