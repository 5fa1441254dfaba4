package buyer

import (
	"context"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/api/internal/validate"
	"github.com/seckill/seckill/rpc/inventoryclient"
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
	uid, err := auth.UID(l.ctx)
	if err != nil {
		return nil, err
	}
	if err := validate.OrderNo(req.OrderNo); err != nil {
		return nil, err
	}
	res, err := l.svcCtx.Inventory.Release(l.ctx, &inventoryclient.OrderReq{OrderNo: req.OrderNo, Uid: uid})
	if err != nil {
		return nil, err
	}
	return &types.OrderStateResp{OrderNo: res.OrderNo, Status: res.Status}, nil
}
