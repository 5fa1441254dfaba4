package logic

import (
	"context"
	"errors"

	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"

	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type ExpireDueLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewExpireDueLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ExpireDueLogic {
	return &ExpireDueLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

func (l *ExpireDueLogic) ExpireDue(in *inventory.ExpireDueReq) (*inventory.ExpireDueResp, error) {
	limit := int(in.Limit)
	if limit == 0 {
		limit = l.svcCtx.Config.Stock.ExpireBatch
	}
	if in.Limit < 0 || in.Limit > stock.MaxExpireBatch {
		return nil, xerr.Newf(xerr.InvalidArgument, "limit must be 0..%d", stock.MaxExpireBatch)
	}
	mysql, err := l.svcCtx.Degrade.Route(l.ctx, in.ActivityId)
	if err != nil {
		return nil, err
	}
	if mysql { // degrade mode: the orders are in MySQL
		done, err := l.svcCtx.Degrade.ExpireDue(l.ctx, in.ActivityId, limit)
		if err != nil {
			return nil, err
		}
		return &inventory.ExpireDueResp{Expired: int64(len(done)), OrderNos: done}, nil
	}
	done, err := l.svcCtx.Store.ExpireDue(l.ctx, in.ActivityId, limit)
	if errors.Is(err, stock.ErrNotWarm) {
		// Listed as active but not in Redis: a loss (BUSY while it is rebuilt), or an
		// ended activity whose keys went (loaded briefly: nothing pending).
		if _, err = l.svcCtx.Loader.Stock(l.ctx, in.ActivityId); err == nil {
			done, err = l.svcCtx.Store.ExpireDue(l.ctx, in.ActivityId, limit)
		}
	}
	if errors.Is(err, xerr.ErrActivityNotFound) {
		return &inventory.ExpireDueResp{}, nil // nothing there, nothing to expire
	}
	if err != nil {
		return nil, err
	}
	return &inventory.ExpireDueResp{Expired: int64(len(done)), OrderNos: done}, nil
}
