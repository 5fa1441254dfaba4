package logic

import (
	"context"
	"errors"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/internal/svc"
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

// resolveMiss makes sure the activity of orderNo is in Redis when its stock hash is not:
// the loader's one path for a miss (a cold activity is loaded, a lost one rebuilt, BUSY
// while that runs; an unknown one is ACTIVITY_NOT_FOUND).
func resolveMiss(ctx context.Context, svcCtx *svc.ServiceContext, orderNo string) error {
	aid, err := domain.CheckOrderNo(orderNo)
	if err != nil {
		return err
	}
	_, err = svcCtx.Loader.Stock(ctx, aid)
	if errors.Is(err, xerr.ErrActivityNotFound) {
		return xerr.ErrOrderNotFound // an order of no activity
	}
	return err
}
