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

type ReleaseLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewReleaseLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ReleaseLogic {
	return &ReleaseLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

func (l *ReleaseLogic) Release(in *inventory.OrderReq) (*inventory.OrderStateResp, error) {
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
		err = l.svcCtx.Degrade.Release(l.ctx, in.OrderNo, in.Uid, domain.StateCancelled)
	} else {
		err = l.svcCtx.Store.Release(l.ctx, in.OrderNo, in.Uid, domain.StateCancelled)
		if errors.Is(err, stock.ErrNotWarm) {
			if err = resolveMiss(l.ctx, l.svcCtx, in.OrderNo); err == nil {
				err = l.svcCtx.Store.Release(l.ctx, in.OrderNo, in.Uid, domain.StateCancelled)
			}
		}
		if err != nil {
			err = l.svcCtx.Degrade.Failed(l.ctx, aid, err) // Redis down: degrade mode
		}
	}
	if err != nil {
		return nil, err
	}
	return &inventory.OrderStateResp{OrderNo: in.OrderNo, Status: domain.StateCancelled}, nil
}
