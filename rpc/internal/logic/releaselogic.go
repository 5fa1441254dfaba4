package logic

import (
	"context"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"
)

type ReleaseLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

func NewReleaseLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ReleaseLogic {
	return &ReleaseLogic{ctx: ctx, svcCtx: svcCtx}
}

func (l *ReleaseLogic) Release(in *inventory.OrderReq) (*inventory.OrderStateResp, error) {
	err := l.svcCtx.Book.Release(l.ctx, in.OrderNo, in.Uid, domain.StateCancelled)
	return toOrderState(in.OrderNo, domain.StateCancelled, err)
}
