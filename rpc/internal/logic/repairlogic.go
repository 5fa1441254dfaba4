package logic

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seckill/seckill/internal/reconcile"
	"github.com/seckill/seckill/internal/xerr"

	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type RepairLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewRepairLogic(ctx context.Context, svcCtx *svc.ServiceContext) *RepairLogic {
	return &RepairLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

// Repair re-emits the events MySQL is missing (an explicit operator action; see
// reconcile.Reconciler.Repair for when it refuses).
func (l *RepairLogic) Repair(in *inventory.ReconcileReq) (*inventory.RepairResp, error) {
	if err := actFor(l.ctx, l.svcCtx, in.ActivityId, in.MerchantId); err != nil {
		return nil, err
	}
	n, _, err := l.svcCtx.Reconciler.Repair(l.ctx, in.ActivityId)
	if errors.Is(err, reconcile.ErrRefused) {
		l.Errorf("repair of activity %d refused: %v", in.ActivityId, err)
		return nil, status.Error(codes.FailedPrecondition, err.Error())
	}
	if err != nil {
		return nil, xerr.Unavailable(err)
	}
	if n > 0 {
		l.Infof("repair of activity %d: re-emitted %d events", in.ActivityId, n)
	}
	return &inventory.RepairResp{ActivityId: in.ActivityId, Reemitted: int64(n)}, nil
}
