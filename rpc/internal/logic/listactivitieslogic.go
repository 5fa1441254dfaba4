package logic

import (
	"context"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type ListActivitiesLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewListActivitiesLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ListActivitiesLogic {
	return &ListActivitiesLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

// ListActivities lists one merchant's activities from MySQL, newest first, one page. It
// never touches Redis.
func (l *ListActivitiesLogic) ListActivities(in *inventory.ListActivitiesReq) (*inventory.ListActivitiesResp, error) {
	if in.MerchantId < 1 {
		return nil, xerr.New(xerr.InvalidArgument, "merchant_id must be >= 1")
	}
	if err := domain.CheckPage(in.Page, in.Size); err != nil {
		return nil, err
	}
	rows, total, err := l.svcCtx.Activities.FindByMerchant(l.ctx, uint64(in.MerchantId), (in.Page-1)*in.Size, in.Size)
	if err != nil {
		return nil, xerr.Newf(xerr.Internal, "list activities of merchant %d: %v", in.MerchantId, err)
	}
	resp := &inventory.ListActivitiesResp{Total: total, Activities: make([]*inventory.Activity, 0, len(rows))}
	for _, a := range rows {
		resp.Activities = append(resp.Activities, activityOf(a))
	}
	return resp, nil
}
