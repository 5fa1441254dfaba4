package logic

import (
	"github.com/seckill/seckill/internal/stock"
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
func Status(s stock.Snapshot, now int64) string {
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

func toStock(s stock.Snapshot) *inventory.Stock {
	return &inventory.Stock{ActivityId: s.ActivityID, Total: s.Total, Remaining: s.Remaining,
		Locked: s.Locked, Sold: s.Sold}
}

func toActivity(s stock.Snapshot) *inventory.Activity {
	return &inventory.Activity{ActivityId: s.ActivityID, SkuId: s.SkuID, Name: s.Name, StartTime: s.Start,
		EndTime: s.End, PerUserLimit: s.Limit, PayTimeoutSeconds: s.PayTimeout, Total: s.Total}
}
