package logic

import (
	"context"
	"errors"

	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"

	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type ReconcileLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewReconcileLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ReconcileLogic {
	return &ReconcileLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

func (l *ReconcileLogic) Reconcile(in *inventory.ReconcileReq) (*inventory.ReconcileResp, error) {
	// Until the reconciliation job lands (issue 5) this reports both books side by side.
	resp := &inventory.ReconcileResp{ActivityId: in.ActivityId, Status: "unknown"}
	snap, err := l.svcCtx.Store.Stock(l.ctx, in.ActivityId)
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
		return nil, err
	}
	resp.Db = &inventory.DbStock{Available: int64(inv.Available), Locked: int64(inv.Locked), Sold: int64(inv.Sold)}
	return resp, nil
}
