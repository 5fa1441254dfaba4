package buyer

import (
	"context"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/middleware"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

type ReserveLogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// reserve stock
func NewReserveLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ReserveLogic {
	return &ReserveLogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

// Reserve applies the per-user limit to a reservation the edge checked (edge.Gate) and asks
// the inventory service, coalesced with the activity's other reservations (coalesce), whose
// Lua script decides (replay, window, per-user limit, stock).
func (l *ReserveLogic) Reserve(req *types.ReserveReq) (*types.ReserveResp, error) {
	uid, err := auth.UID(l.ctx)
	if err != nil {
		return nil, err
	}
	if err := allow(l.ctx, l.svcCtx, l.svcCtx.Limiter, errRateLimited); err != nil {
		return nil, err
	}
	res, err := l.send(req, uid)
	if err != nil {
		return nil, err // the item's own *xerr.Error: reply.Outcome must see a SOLD_OUT as one
	}
	status := res.Status // a replay reports the order as it is now
	if status == "" {    // an inventory service from before the field
		status = domain.StateReserved
	}
	return &types.ReserveResp{
		OrderNo:    res.OrderNo,
		ActivityId: req.ActivityId,
		Quantity:   res.Quantity,
		Status:     status,
		ExpireAt:   res.ExpireAt,
		Remaining:  res.Remaining,
		Amount:     res.Amount,
		RequestId:  res.RequestId,
		DrawAt:     res.DrawAt,
	}, nil
}

// send asks the inventory service: through the coalescer when it is on, else one Reserve call.
func (l *ReserveLogic) send(req *types.ReserveReq, uid int64) (*inventoryclient.ReserveResp, error) {
	if l.svcCtx.Reservations != nil {
		return l.svcCtx.Reservations.Reserve(l.ctx, req.ActivityId, &inventoryclient.ReserveItem{
			Uid: uid, Quantity: req.Quantity, RequestId: req.RequestId, ClientAddr: middleware.ClientAddr(l.ctx)})
	}
	res, err := l.svcCtx.Inventory.Reserve(l.ctx, &inventoryclient.ReserveReq{ActivityId: req.ActivityId, Uid: uid,
		Quantity: req.Quantity, RequestId: req.RequestId, ClientAddr: middleware.ClientAddr(l.ctx)})
	if err != nil {
		return nil, xerr.FromStatus(err)
	}
	return res, nil
}
