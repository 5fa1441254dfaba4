package merchant

import (
	"context"

	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/rpc/inventoryclient"

	"github.com/zeromicro/go-zero/core/logx"
)

type EndActivityLogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// end the sale now: end_time becomes now
func NewEndActivityLogic(ctx context.Context, svcCtx *svc.ServiceContext) *EndActivityLogic {
	return &EndActivityLogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

// EndActivity asks the inventory service to end the merchant's activity now and answers the
// activity as ended. Every gateway sees the end at once: reservations are decided against the
// end in Redis, which the inventory service moved (a gateway's cached window only ever answers
// ENDED or NOT_STARTED by itself, never lets a reservation through).
func (l *EndActivityLogic) EndActivity(req *types.ActivityPathReq) (*types.ActivityResp, error) {
	mid, err := merchantFor(l.ctx, req.Id)
	if err != nil {
		return nil, err
	}
	res, err := l.svcCtx.Inventory.EndActivity(l.ctx,
		&inventoryclient.GetActivityReq{ActivityId: req.Id, MerchantId: mid})
	if err != nil {
		return nil, err
	}
	out := activityResp(res.GetActivity())
	return &out, nil
}
