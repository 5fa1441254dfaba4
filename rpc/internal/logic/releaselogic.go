package logic

import (
	"context"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type ReleaseLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewReleaseLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ReleaseLogic {
	return &ReleaseLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

func (l *ReleaseLogic) Release(in *inventory.OrderReq) (*inventory.OrderStateResp, error) {
	if err := l.svcCtx.Store.Release(l.ctx, in.OrderNo, in.Uid, domain.StateCancelled); err != nil {
		return nil, err
	}
	return &inventory.OrderStateResp{OrderNo: in.OrderNo, Status: domain.StateCancelled}, nil
}
