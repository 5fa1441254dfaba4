package logic

import (
	"context"
	"errors"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type ConfirmLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewConfirmLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ConfirmLogic {
	return &ConfirmLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

func (l *ConfirmLogic) Confirm(in *inventory.OrderReq) (*inventory.OrderStateResp, error) {
	aid, err := l.svcCtx.Store.CheckOrderNo(in.OrderNo)
	if err != nil {
		return nil, err
	}
	// The fence: which book holds the order's activity now (degrade mode; Redis when off).
	mysql, err := l.svcCtx.Degrade.Route(l.ctx, aid)
	if err != nil {
		return nil, err
	}
	if mysql {
		err = l.svcCtx.Degrade.Confirm(l.ctx, in.OrderNo, in.Uid)
	} else {
		err = l.svcCtx.Store.Confirm(l.ctx, in.OrderNo, in.Uid)
		if errors.Is(err, stock.ErrNotWarm) {
			// Neither the order nor the stock in Redis: resolve the miss (a rebuild after a
			// loss, BUSY meanwhile), then try once more.
			if err = resolveMiss(l.ctx, l.svcCtx, in.OrderNo); err == nil {
				err = l.svcCtx.Store.Confirm(l.ctx, in.OrderNo, in.Uid)
			}
		}
		if err != nil {
			err = l.svcCtx.Degrade.Failed(l.ctx, aid, err) // Redis down: degrade mode
		}
	}
	if err != nil {
		return nil, err
	}
	return &inventory.OrderStateResp{OrderNo: in.OrderNo, Status: domain.StatePaid}, nil
}
