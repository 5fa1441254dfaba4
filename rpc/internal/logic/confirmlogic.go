package logic

import (
	"context"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type ConfirmLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewConfirmLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ConfirmLogic {
	return &ConfirmLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

func (l *ConfirmLogic) Confirm(in *inventory.OrderReq) (*inventory.OrderStateResp, error) {
	if err := l.svcCtx.Store.Confirm(l.ctx, in.OrderNo, in.Uid); err != nil {
		return nil, err
	}
	return &inventory.OrderStateResp{OrderNo: in.OrderNo, Status: domain.StatePaid}, nil
}
