package buyer

import (
	"context"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/internal/drawview"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/api/internal/validate"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

type GetActivityLogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// an activity as buyers see it
func NewGetActivityLogic(ctx context.Context, svcCtx *svc.ServiceContext) *GetActivityLogic {
	return &GetActivityLogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

// GetActivity reads through the inventory service, which backfills a cold cache under a
// lock and caches unknown ids as missing.
func (l *GetActivityLogic) GetActivity(req *types.ActivityPathReq) (*types.ActivityViewResp, error) {
	if err := validate.ActivityID(req.Id); err != nil {
		return nil, err
	}
	if err := allow(l.ctx, l.svcCtx, l.svcCtx.ReadLimiter, errReadsLimited); err != nil {
		return nil, err
	}
	res, err := l.svcCtx.Inventory.GetStock(l.ctx, &inventoryclient.GetStockReq{ActivityId: req.Id})
	if err != nil {
		return nil, err
	}
	a := res.GetActivity()
	return &types.ActivityViewResp{
		ActivityId:   a.GetActivityId(),
		SkuId:        a.GetSkuId(),
		Name:         a.GetName(),
		StartTime:    a.GetStartTime(),
		EndTime:      a.GetEndTime(),
		PerUserLimit: a.GetPerUserLimit(),
		Remaining:    res.GetStock().GetRemaining(),
		Status:       res.GetStatus(),
		Price:        a.GetPrice(),
		Draw:         drawview.Public(a),
	}, nil
}
