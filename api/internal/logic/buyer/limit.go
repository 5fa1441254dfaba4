package buyer

import (
	"context"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/internal/xerr"
)

// The answers of the per-buyer limits (RateLimit).
var (
	errReadsLimited   = xerr.New(xerr.RateLimited, "too many reads, slow down")
	errChangesLimited = xerr.New(xerr.RateLimited, "too many pay or cancel requests, slow down")
)

// allow takes one unit of the calling buyer's quota on lim (nil: no limit) and answers
// over past it. A limiter whose Redis fails does what LimiterFailure says (open, closed).
func allow(ctx context.Context, svcCtx *svc.ServiceContext, lim *svc.UserLimiter, over error) error {
	if lim == nil {
		return nil
	}
	uid, err := auth.UID(ctx)
	if err != nil {
		return err
	}
	ok, err := lim.Allow(ctx, uid)
	if err != nil {
		return svcCtx.LimiterFailure.Failed(ctx, "user", err)
	}
	if !ok {
		return over
	}
	return nil
}
