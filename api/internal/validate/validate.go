// Package validate holds the bounds of docs/API.md in one place. Each check returns an
// INVALID_ARGUMENT *xerr.Error naming the field; nothing is sent anywhere before it passes.
package validate

import (
	"unicode/utf8"

	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
)

// Bounds from docs/API.md.
const (
	MaxNameChars      = domain.MaxNameChars
	MaxStock          = domain.MaxStock
	MaxPerUserLimit   = domain.MaxQuantity
	MaxPayTimeoutSecs = domain.MaxPayTimeoutSecs
)

func invalid(format string, args ...any) error {
	return xerr.Newf(xerr.InvalidArgument, format, args...)
}

// ActivityID checks an activity id from a path or body.
func ActivityID(id int64) error { return domain.CheckActivityID(id) }

// OrderNo checks the format of an order number ("<activity id>-<ms><hex>").
func OrderNo(orderNo string) error {
	_, err := domain.CheckOrderNo(orderNo)
	return err
}

// CreateActivity checks a new activity.
func CreateActivity(r *types.CreateActivityReq) error {
	switch n := utf8.RuneCountInString(r.Name); {
	case r.SkuId < 1:
		return invalid("sku_id must be >= 1")
	case !utf8.ValidString(r.Name) || n < 1 || n > MaxNameChars:
		return invalid("name must be 1-%d characters of valid UTF-8", MaxNameChars)
	case r.Stock < 1 || r.Stock > MaxStock:
		return invalid("stock must be in 1..%d", MaxStock)
	case r.StartTime < 0:
		return invalid("start_time must be unix seconds >= 0")
	case r.EndTime <= r.StartTime:
		return invalid("end_time must be after start_time")
	case r.PerUserLimit < 1 || r.PerUserLimit > MaxPerUserLimit:
		return invalid("per_user_limit must be in 1..%d", MaxPerUserLimit)
	case r.PayTimeoutSeconds < 1 || r.PayTimeoutSeconds > MaxPayTimeoutSecs:
		return invalid("pay_timeout_seconds must be in 1..%d", MaxPayTimeoutSecs)
	}
	return nil
}

// Delta checks a stock adjustment.
func Delta(d int64) error { return domain.CheckDelta(d) }

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
