package logic

import (
	"context"
	"time"

	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type GetStockLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewGetStockLogic(ctx context.Context, svcCtx *svc.ServiceContext) *GetStockLogic {
	return &GetStockLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

func (l *GetStockLogic) GetStock(in *inventory.GetStockReq) (*inventory.GetStockResp, error) {
	snap, err := l.svcCtx.Loader.Stock(l.ctx, in.ActivityId)
	if err != nil {
		return nil, err
	}
	return &inventory.GetStockResp{Activity: toActivity(snap), Stock: toStock(snap), Warm: true,
		Status: Status(snap, time.Now().Unix())}, nil
}
