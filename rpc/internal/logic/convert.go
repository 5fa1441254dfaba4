package logic

import (
	"context"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/internal/activity"
	"github.com/seckill/seckill/rpc/inventory"
)

// Activity status words of the API.
const (
	StatusUpcoming = "upcoming"
	StatusActive   = "active"
	StatusSoldOut  = "sold_out"
	StatusEnded    = "ended"
)

// Status is the buyer-facing status of an activity at now (unix seconds).
func Status(s domain.Activity, now int64) string {
	switch {
	case now >= s.End:
		return StatusEnded
	case now < s.Start:
		return StatusUpcoming
	case s.Remaining <= 0:
		return StatusSoldOut
	default:
		return StatusActive
	}
}

func toStock(s domain.Activity) *inventory.Stock {
	return &inventory.Stock{ActivityId: s.ActivityID, Total: s.Total, Remaining: s.Remaining,
		Locked: s.Locked, Sold: s.Sold}
}

func toActivity(s domain.Activity) *inventory.Activity {
	return &inventory.Activity{ActivityId: s.ActivityID, SkuId: s.SkuID, Name: s.Name, StartTime: s.Start,
		EndTime: s.End, PerUserLimit: s.Limit, PayTimeoutSeconds: s.PayTimeout, Total: s.Total, Price: s.Price}
}

// toReserveResp is a reservation's answer; its amount is its quantity x price (an entry of the
// draw, queued, has none yet).
func toReserveResp(res domain.Reservation, price int64, err error) (*inventory.ReserveResp, error) {
	if err != nil {
		return nil, err
	}
	var amount int64
	if res.State != domain.StateQueued {
		amount = res.Quantity * price
	}
	return &inventory.ReserveResp{OrderNo: res.OrderNo, Quantity: res.Quantity, ExpireAt: res.ExpireAt / 1000,
		Remaining: res.Remaining, Replay: res.Replay, Status: res.State, RequestId: res.RequestID,
		DrawAt: res.DrawAt / 1000, Amount: amount}, nil
}

// priceFor is the unit price of activity aid when one of res is an order (an amount to show),
// else 0 without a read: a refusal (NOT_STARTED before the start above all) never reads MySQL.
func priceFor(ctx context.Context, prices *activity.Prices, aid int64, res []stock.ReserveResult) (int64, error) {
	for _, r := range res {
		if r.Err == nil && r.State != domain.StateQueued {
			return prices.Price(ctx, aid)
		}
	}
	return 0, nil
}

func toOrderState(orderNo, state string, err error) (*inventory.OrderStateResp, error) {
	if err != nil {
		return nil, err
	}
	return &inventory.OrderStateResp{OrderNo: orderNo, Status: state}, nil
}

// expireLimit is an ExpireDue request's limit: 0 is the configured batch, else 1..stock.MaxExpireBatch.
func expireLimit(limit int64, batch int) (int, error) {
	if limit < 0 || limit > stock.MaxExpireBatch {
		return 0, xerr.Newf(xerr.InvalidArgument, "limit must be 0..%d", stock.MaxExpireBatch)
	}
	if limit == 0 {
		return batch, nil
	}
	return int(limit), nil
}

func toExpireDueResp(done []string, err error) (*inventory.ExpireDueResp, error) {
	if xerr.CodeOf(err) == xerr.ActivityNotFound {
		return &inventory.ExpireDueResp{}, nil // nothing there, nothing to expire
	}
	if err != nil {
		return nil, err
	}
	return &inventory.ExpireDueResp{Expired: int64(len(done)), OrderNos: done}, nil
}

// toReserveItems checks a batch's bounds; each item's own values are checked as a single reservation's.
func toReserveItems(in *inventory.ReserveBatchReq) ([]domain.ReserveItem, error) {
	if err := domain.CheckActivityID(in.ActivityId); err != nil {
		return nil, err
	}
	if len(in.Items) < 1 || len(in.Items) > stock.MaxReserveBatch {
		return nil, xerr.Newf(xerr.InvalidArgument, "a batch holds 1..%d items, not %d", stock.MaxReserveBatch,
			len(in.Items))
	}
	items := make([]domain.ReserveItem, len(in.Items))
	for i, it := range in.Items {
		items[i] = domain.ReserveItem{UID: it.Uid, Qty: it.Quantity, RequestID: it.RequestId, Addr: it.ClientAddr}
	}
	return items, nil
}

// toReserveBatchResp answers each item with its reservation or its error's code and message.
// A price that cannot be read fails the batch (BUSY): the retries replay the reservations.
func toReserveBatchResp(ctx context.Context, prices *activity.Prices, aid int64, res []stock.ReserveResult,
	err error) (*inventory.ReserveBatchResp, error) {
	if err != nil {
		return nil, err
	}
	price, err := priceFor(ctx, prices, aid, res)
	if err != nil {
		return nil, err
	}
	out := &inventory.ReserveBatchResp{Results: make([]*inventory.ReserveResult, len(res))}
	for i, r := range res {
		resp, err := toReserveResp(r.Reservation, price, r.Err)
		if err != nil {
			e := xerr.FromStatus(xerr.ToStatus(err))
			out.Results[i] = &inventory.ReserveResult{Code: string(e.Code), Msg: e.Msg}
			continue
		}
		out.Results[i] = &inventory.ReserveResult{Reservation: resp}
	}
	return out, nil
}
