package merchant

import (
	"context"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/api/internal/validate"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

type ListActivitiesLogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// the merchant's own activities, newest first
func NewListActivitiesLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ListActivitiesLogic {
	return &ListActivitiesLogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

// ListActivities lists the calling merchant's activities (the mid claim, never a
// parameter), newest first.
func (l *ListActivitiesLogic) ListActivities(req *types.ListActivitiesReq) (*types.ActivityListResp, error) {
	mid, err := auth.MID(l.ctx)
	if err != nil {
		return nil, err
	}
	if err := validate.Page(req.Page, req.Size); err != nil {
		return nil, err
	}
	res, err := l.svcCtx.Inventory.ListActivities(l.ctx, &inventoryclient.ListActivitiesReq{
		MerchantId: mid, Page: req.Page, Size: req.Size})
	if err != nil {
		return nil, err
	}
	out := &types.ActivityListResp{Activities: make([]types.ActivityResp, 0, len(res.Activities)),
		Page: req.Page, Size: req.Size, Total: res.Total}
	for _, a := range res.Activities {
		out.Activities = append(out.Activities, activityResp(a))
	}
	return out, nil
}
