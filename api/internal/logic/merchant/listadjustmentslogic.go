package merchant

import (
	"context"

	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/rpc/inventoryclient"

	"github.com/zeromicro/go-zero/core/logx"
)

type ListAdjustmentsLogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// the activity's stock changes, newest first
func NewListAdjustmentsLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ListAdjustmentsLogic {
	return &ListAdjustmentsLogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

// ListAdjustments passes on the inventory service's stock history of the merchant's activity.
func (l *ListAdjustmentsLogic) ListAdjustments(req *types.ActivityPathReq) (*types.AdjustmentListResp, error) {
	mid, err := merchantFor(l.ctx, req.Id)
	if err != nil {
		return nil, err
	}
	res, err := l.svcCtx.Inventory.Adjustments(l.ctx,
		&inventoryclient.GetActivityReq{ActivityId: req.Id, MerchantId: mid})
	if err != nil {
		return nil, err
	}
	out := &types.AdjustmentListResp{Adjustments: make([]types.AdjustmentItem, len(res.GetAdjustments()))}
	for i, a := range res.GetAdjustments() {
		out.Adjustments[i] = types.AdjustmentItem{Delta: a.GetDelta(), Total: a.GetTotal(), CreatedAt: a.GetCreatedAt()}
	}
	return out, nil
}
