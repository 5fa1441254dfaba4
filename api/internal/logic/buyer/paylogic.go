package buyer

import (
	"context"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/internal/xerr"
)

type PayLogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// confirm payment of a reserved order
func NewPayLogic(ctx context.Context, svcCtx *svc.ServiceContext) *PayLogic {
	return &PayLogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

// errBuyerConfirms: Pay.BuyerConfirms is false (deployments): payments are confirmed by the
// payment provider's notification only.
var errBuyerConfirms = xerr.New(xerr.Forbidden,
	"payments are confirmed by the payment provider here, not by the buyer (Pay.BuyerConfirms is false)")

// Pay confirms the buyer's own order while Pay.BuyerConfirms allows it (demos, the load
// generator); else 403 FORBIDDEN before anything is read.
func (l *PayLogic) Pay(req *types.OrderPathReq) (*types.OrderStateResp, error) {
	if !l.svcCtx.Config.Pay.BuyerConfirms {
		return nil, errBuyerConfirms
	}
	in, err := orderReq(l.ctx, req.OrderNo)
	if err != nil {
		return nil, err
	}
	if err := allow(l.ctx, l.svcCtx, l.svcCtx.ChangeLimiter, errChangesLimited); err != nil {
		return nil, err
	}
	res, err := l.svcCtx.Inventory.Confirm(l.ctx, in)
	if err != nil {
		return nil, err
	}
	return &types.OrderStateResp{OrderNo: res.OrderNo, Status: res.Status}, nil
}
