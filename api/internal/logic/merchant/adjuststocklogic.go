package merchant

import (
	"context"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/internal/middleware"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/api/internal/validate"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

type AdjustStockLogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// add or withdraw sellable stock
func NewAdjustStockLogic(ctx context.Context, svcCtx *svc.ServiceContext) *AdjustStockLogic {
	return &AdjustStockLogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

func (l *AdjustStockLogic) AdjustStock(req *types.AdjustStockReq) (*types.StockResp, error) {
	if err := validate.Delta(req.Delta); err != nil {
		return nil, err
	}
	mid, err := merchantFor(l.ctx, req.Id)
	if err != nil {
		return nil, err
	}
	idem := middleware.IdempotencyOf(l.ctx)
	res, err := l.svcCtx.Inventory.Adjust(l.ctx, &inventoryclient.AdjustReq{ActivityId: req.Id, Delta: req.Delta,
		MerchantId: mid, IdempotencyKey: idem.Key, IdempotencyFp: idem.FP})
	if err != nil {
		return nil, err
	}
	if req.Delta > 0 { // stock came back: this gateway drops its mark now
		l.svcCtx.Edge.StockBack(req.Id)
	}
	s := res.GetStock()
	return &types.StockResp{Total: s.GetTotal(), Remaining: s.GetRemaining(), Locked: s.GetLocked(),
		Sold: s.GetSold()}, nil
}
