package logic

import (
	"context"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"
)

type ConfirmLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

func NewConfirmLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ConfirmLogic {
	return &ConfirmLogic{ctx: ctx, svcCtx: svcCtx}
}

func (l *ConfirmLogic) Confirm(in *inventory.OrderReq) (*inventory.OrderStateResp, error) {
	return toOrderState(in.OrderNo, domain.StatePaid, l.svcCtx.Book.Confirm(l.ctx, in.OrderNo, in.Uid))
}
