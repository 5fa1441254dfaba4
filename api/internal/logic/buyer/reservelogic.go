package buyer

import (
	"context"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/internal/reserve"
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

// Reserve asks the inventory service for a reservation the pipeline checked (marks and
// limits, api/internal/reserve), coalesced with the activity's other reservations, whose Lua
// script decides (replay, window, per-user limit, stock).
func (l *ReserveLogic) Reserve(req *types.ReserveReq) (*types.ReserveResp, error) {
	res, err := l.send()
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

// send asks the inventory service for the request's reservation (reserve.Item): through the
// coalescer (Reservations) when there is one, else one Reserve call; an error is the item's own
// *xerr.Error.
func (l *ReserveLogic) send() (*inventoryclient.ReserveResp, error) {
	aid, it, ok := reserve.Item(l.ctx)
	if !ok {
		return nil, reserve.ErrNoReservation
	}
	if c := l.svcCtx.Reservations; c != nil {
		return c.Reserve(l.ctx, aid, it)
	}
	res, err := l.svcCtx.Inventory.Reserve(l.ctx, &inventoryclient.ReserveReq{ActivityId: aid, Uid: it.Uid,
		Quantity: it.Quantity, RequestId: it.RequestId, ClientAddr: it.ClientAddr})
	if err != nil {
		return nil, xerr.FromStatus(err)
	}
	return res, nil
}
