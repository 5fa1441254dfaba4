// Package validate holds the bounds of docs/API.md in one place. Each check returns an
// INVALID_ARGUMENT *xerr.Error naming the field; nothing is sent anywhere before it passes.
package validate

import (
	"time"

	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/internal/domain"
)

// ActivityID checks an activity id from a path or body.
func ActivityID(id int64) error { return domain.CheckActivityID(id) }

// OrderNo checks the format of an order number ("<activity id>-<ms><hex>").
func OrderNo(orderNo string) error {
	_, err := domain.CheckOrderNo(orderNo)
	return err
}

// CreateActivity checks a new activity.
func CreateActivity(r *types.CreateActivityReq) error {
	return domain.CheckNewActivity(domain.NewActivity{SkuID: r.SkuId, Name: r.Name, Stock: r.Stock,
		StartTime: r.StartTime, EndTime: r.EndTime, PerUserLimit: r.PerUserLimit,
		PayTimeoutSeconds: r.PayTimeoutSeconds, DrawSeconds: r.DrawSeconds, Price: r.Price}, time.Now())
}

// Delta checks a stock adjustment.
func Delta(d int64) error { return domain.CheckDelta(d) }

// Page checks the page and size of a list.
func Page(page, size int64) error { return domain.CheckPage(page, size) }

// Reserve checks a reservation.
func Reserve(r *types.ReserveReq) error {
	for _, err := range []error{domain.CheckActivityID(r.ActivityId), domain.CheckQuantity(r.Quantity),
		domain.CheckRequestID(r.RequestId)} {
		if err != nil {
			return err
		}
	}
	return nil
}

// PaymentNotify checks a payment provider's notification (its signature was checked before).
func PaymentNotify(r *types.PaymentNotifyReq) error {
	for _, err := range []error{OrderNo(r.OrderNo), domain.CheckAmount(r.Amount),
		domain.CheckTradeNo(r.TradeNo)} {
		if err != nil {
			return err
		}
	}
	return nil
}

// UpdateActivity checks an edit before the start (create's bounds; stock only when sent).
func UpdateActivity(r *types.UpdateActivityReq) error {
	if err := domain.CheckActivityID(r.Id); err != nil {
		return err
	}
	var stock int64
	if r.Stock != nil {
		stock = *r.Stock
	}
	return domain.CheckActivityEdit(domain.NewActivity{SkuID: r.SkuId, Name: r.Name, Stock: stock,
		StartTime: r.StartTime, EndTime: r.EndTime, PerUserLimit: r.PerUserLimit,
		PayTimeoutSeconds: r.PayTimeoutSeconds, DrawSeconds: r.DrawSeconds, Price: r.Price},
		r.Stock != nil, time.Now())
}
