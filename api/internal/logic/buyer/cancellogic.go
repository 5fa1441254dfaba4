package buyer

import (
	"context"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/internal/domain"
)

type CancelLogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// release a reserved order's stock
func NewCancelLogic(ctx context.Context, svcCtx *svc.ServiceContext) *CancelLogic {
	return &CancelLogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

func (l *CancelLogic) Cancel(req *types.OrderPathReq) (*types.OrderStateResp, error) {
	in, err := orderReq(l.ctx, req.OrderNo)
	if err != nil {
		return nil, err
	}
	if err := allow(l.ctx, l.svcCtx, l.svcCtx.ChangeLimiter, errChangesLimited); err != nil {
		return nil, err
	}
	res, err := l.svcCtx.Inventory.Release(l.ctx, in)
	if err != nil {
		return nil, err
	}
	// Stock came back: this gateway drops its mark now (the others on the script's
	// stock-back message).
	if aid, ok := domain.ParseOrderNo(res.OrderNo); ok {
		l.svcCtx.Edge.StockBack(aid)
	}
	return &types.OrderStateResp{OrderNo: res.OrderNo, Status: res.Status}, nil
}
