package logic

import (
	"context"

	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"
)

type ExpireDueLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

func NewExpireDueLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ExpireDueLogic {
	return &ExpireDueLogic{ctx: ctx, svcCtx: svcCtx}
}

func (l *ExpireDueLogic) ExpireDue(in *inventory.ExpireDueReq) (*inventory.ExpireDueResp, error) {
	limit, err := expireLimit(in.Limit, l.svcCtx.Config.Stock.ExpireBatch)
	if err != nil {
		return nil, err
	}
	return toExpireDueResp(l.svcCtx.Book.ExpireDue(l.ctx, in.ActivityId, limit))
}
