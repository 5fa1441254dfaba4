package logic

import (
	"context"

	"github.com/seckill/seckill/internal/reconcile"
	"github.com/seckill/seckill/internal/xerr"

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

// Reconcile compares Redis with MySQL now (internal/reconcile). The scheduled job and the
// admin endpoint both come here, so they share one history of unexplained differences, and
// one run per activity at a time across instances (reconcile.Single): a caller who asks
// while one runs gets its report.
func (l *ReconcileLogic) Reconcile(in *inventory.ReconcileReq) (*inventory.ReconcileResp, error) {
	if err := actFor(l.ctx, l.svcCtx, in.ActivityId, in.MerchantId); err != nil {
		return nil, err
	}
	rep, err := l.svcCtx.Reconciles.Run(l.ctx, in.ActivityId)
	if err != nil {
		return nil, xerr.Unavailable(err) // a business outcome passes as it is
	}
	return toReconcileResp(rep), nil
}

func toReconcileResp(rep reconcile.Report) *inventory.ReconcileResp {
	resp := &inventory.ReconcileResp{ActivityId: rep.ActivityID, Status: string(rep.Status),
		Db:       &inventory.DbStock{Available: rep.DB.Available, Locked: rep.DB.Locked, Sold: rep.DB.Sold},
		InFlight: rep.InFlight, Diffs: rep.Diffs}
	if r := rep.Redis; r != nil {
		resp.Redis = &inventory.Stock{ActivityId: rep.ActivityID, Total: r.Total, Remaining: r.Remaining,
			Locked: r.Locked, Sold: r.Sold}
	}
	return resp
}
