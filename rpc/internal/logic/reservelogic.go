package logic

import (
	"context"

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
	return toReserveResp(l.svcCtx.Book.Reserve(l.ctx, in.ActivityId, in.Uid, in.Quantity, in.RequestId))
}
