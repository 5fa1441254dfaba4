package logic

import (
	"context"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"
)

type ReserveBatchLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

func NewReserveBatchLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ReserveBatchLogic {
	return &ReserveBatchLogic{ctx: ctx, svcCtx: svcCtx}
}

func (l *ReserveBatchLogic) ReserveBatch(in *inventory.ReserveBatchReq) (*inventory.ReserveBatchResp, error) {
	items, err := toReserveItems(in)
	if err != nil {
		return nil, err
	}
	return toReserveBatchResp(l.svcCtx.Book.ReserveBatch(l.ctx, in.ActivityId, items))
}

// toReserveItems checks a batch's bounds; each item's own values are checked as a single reservation's.
func toReserveItems(in *inventory.ReserveBatchReq) ([]stock.ReserveItem, error) {
	if err := domain.CheckActivityID(in.ActivityId); err != nil {
		return nil, err
	}
	if len(in.Items) < 1 || len(in.Items) > stock.MaxReserveBatch {
		return nil, xerr.Newf(xerr.InvalidArgument, "a batch holds 1..%d items, not %d", stock.MaxReserveBatch,
			len(in.Items))
	}
	items := make([]stock.ReserveItem, len(in.Items))
	for i, it := range in.Items {
		items[i] = stock.ReserveItem{UID: it.Uid, Qty: it.Quantity, RequestID: it.RequestId}
	}
	return items, nil
}

func toReserveBatchResp(res []stock.ReserveResult, err error) (*inventory.ReserveBatchResp, error) {
	if err != nil {
		return nil, err
	}
	out := &inventory.ReserveBatchResp{Results: make([]*inventory.ReserveResult, len(res))}
	for i, r := range res {
		resp, err := toReserveResp(r.Reservation, r.Err)
		if err != nil {
			e := xerr.FromStatus(xerr.ToStatus(err))
			out.Results[i] = &inventory.ReserveResult{Code: string(e.Code), Msg: e.Msg}
			continue
		}
		out.Results[i] = &inventory.ReserveResult{Reservation: resp}
	}
	return out, nil
}
