package buyer

import (
	"context"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

var errRateLimited = xerr.New(xerr.RateLimited, "too many reservation attempts, slow down")

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
// the inventory service, whose Lua script decides (replay, window, per-user limit, stock).
func (l *ReserveLogic) Reserve(req *types.ReserveReq) (*types.ReserveResp, error) {
	uid, err := auth.UID(l.ctx)
	if err != nil {
		return nil, err
	}
	if err := l.allow(uid); err != nil {
		return nil, err
	}
	res, err := l.svcCtx.Inventory.Reserve(l.ctx, &inventoryclient.ReserveReq{
		ActivityId: req.ActivityId,
		Uid:        uid,
		Quantity:   req.Quantity,
		RequestId:  req.RequestId,
	})
	if err != nil {
		return nil, xerr.FromStatus(err)
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
	}, nil
}

// allow takes one unit of the buyer's quota (svc.UserLimiter: in memory, then Redis when
// shared). A limiter that cannot reach Redis does what LimiterFailure says (open: let
// through, counted; closed: BUSY): the limiter protects the service, it does not decide
// stock, and the inventory script stays the one gate for correctness.
func (l *ReserveLogic) allow(uid int64) error {
	lim := l.svcCtx.Limiter
	if lim == nil {
		return nil
	}
	ok, err := lim.Allow(l.ctx, uid)
	if err != nil {
		return l.svcCtx.LimiterFailure.Failed(l.ctx, "user", err)
	}
	if !ok {
		return errRateLimited
	}
	return nil
}
