package logic

import (
	"context"
	"errors"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type GetEntryLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewGetEntryLogic(ctx context.Context, svcCtx *svc.ServiceContext) *GetEntryLogic {
	return &GetEntryLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

// GetEntry answers the buyer's entry in the activity's draw and what the draw made of it; a
// cold or lost activity is loaded first (BUSY meanwhile), as a reservation would.
func (l *GetEntryLogic) GetEntry(in *inventory.EntryReq) (*inventory.EntryResp, error) {
	if err := firstErr(domain.CheckActivityID(in.ActivityId), domain.CheckUID(in.Uid)); err != nil {
		return nil, err
	}
	snap, err := l.svcCtx.Store.Stock(l.ctx, in.ActivityId)
	if errors.Is(err, stock.ErrNotWarm) {
		if snap, err = l.svcCtx.Loader.Stock(l.ctx, in.ActivityId); err != nil {
			return nil, err
		}
	}
	if err != nil {
		return nil, err
	}
	if snap.DrawAt == 0 {
		return nil, xerr.ErrEntryNotFound
	}
	e, status, orderNo, err := l.svcCtx.Store.DrawEntry(l.ctx, in.ActivityId, in.Uid)
	if err != nil {
		return nil, err
	}
	return &inventory.EntryResp{ActivityId: in.ActivityId, RequestId: e.RequestID, Quantity: e.Qty, Status: status,
		OrderNo: orderNo, DrawAt: snap.DrawAt / 1000}, nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
