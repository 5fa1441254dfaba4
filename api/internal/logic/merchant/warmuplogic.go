package merchant

import (
	"context"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

type WarmupLogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// load stock into Redis if absent
func NewWarmupLogic(ctx context.Context, svcCtx *svc.ServiceContext) *WarmupLogic {
	return &WarmupLogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

func (l *WarmupLogic) Warmup(req *types.ActivityPathReq) (*types.WarmupResp, error) {
	mid, err := merchantFor(l.ctx, req.Id)
	if err != nil {
		return nil, err
	}
	res, err := l.svcCtx.Inventory.Warmup(l.ctx, &inventoryclient.WarmupReq{ActivityId: req.Id, MerchantId: mid})
	if err != nil {
		return nil, err
	}
	return &types.WarmupResp{Warmed: res.Warmed, Remaining: res.GetStock().GetRemaining()}, nil
}
