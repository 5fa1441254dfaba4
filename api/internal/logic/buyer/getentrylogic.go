package buyer

import (
	"context"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/rpc/inventoryclient"

	"github.com/zeromicro/go-zero/core/logx"
)

type GetEntryLogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// the caller's entry in the activity's opening draw
func NewGetEntryLogic(ctx context.Context, svcCtx *svc.ServiceContext) *GetEntryLogic {
	return &GetEntryLogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

// GetEntry asks the inventory service for the caller's entry in the activity's draw (404
// ENTRY_NOT_FOUND without one).
func (l *GetEntryLogic) GetEntry(req *types.EntryPathReq) (*types.EntryResp, error) {
	uid, err := auth.UID(l.ctx)
	if err != nil {
		return nil, err
	}
	if err := domain.CheckActivityID(req.ActivityId); err != nil {
		return nil, err
	}
	if err := allow(l.ctx, l.svcCtx, l.svcCtx.ReadLimiter, errReadsLimited); err != nil {
		return nil, err
	}
	e, err := l.svcCtx.Inventory.GetEntry(l.ctx, &inventoryclient.EntryReq{ActivityId: req.ActivityId, Uid: uid})
	if err != nil {
		return nil, err
	}
	return &types.EntryResp{ActivityId: e.GetActivityId(), RequestId: e.GetRequestId(), Quantity: e.GetQuantity(),
		Status: e.GetStatus(), OrderNo: e.GetOrderNo(), DrawAt: e.GetDrawAt()}, nil
}
