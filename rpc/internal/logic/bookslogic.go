package logic

import (
	"context"
	"errors"

	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"

	"github.com/seckill/seckill/rpc/internal/activity"
	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type BooksLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewBooksLogic(ctx context.Context, svcCtx *svc.ServiceContext) *BooksLogic {
	return &BooksLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

func (l *BooksLogic) Books(in *inventory.ReconcileReq) (*inventory.BooksResp, error) {
	if err := actFor(l.ctx, l.svcCtx, in.ActivityId, in.MerchantId); err != nil {
		return nil, err
	}
	resp := &inventory.BooksResp{ActivityId: in.ActivityId}
	snap, err := l.svcCtx.Store.Stock(l.ctx, in.ActivityId) // no backfill: a read must not warm
	switch {
	case err == nil:
		resp.Redis = toStock(snap)
	case !errors.Is(err, stock.ErrNotWarm):
		return nil, err
	}
	inv, err := model.NewInventoryModel(l.svcCtx.DB).FindOne(l.ctx, uint64(in.ActivityId))
	if errors.Is(err, model.ErrNotFound) {
		return nil, xerr.ErrActivityNotFound
	}
	if err != nil {
		return nil, activity.DBError(err)
	}
	resp.Db = &inventory.DbStock{Available: int64(inv.Available), Locked: int64(inv.Locked), Sold: int64(inv.Sold)}
	return resp, nil
}
