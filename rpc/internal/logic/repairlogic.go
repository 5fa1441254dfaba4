package logic

import (
	"context"

	"github.com/seckill/seckill/internal/xerr"

	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type RepairLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewRepairLogic(ctx context.Context, svcCtx *svc.ServiceContext) *RepairLogic {
	return &RepairLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

func (l *RepairLogic) Repair(in *inventory.ReconcileReq) (*inventory.RepairResp, error) {
	return nil, xerr.New(xerr.Internal, "repair is not implemented yet")
}
