package merchant

import (
	"context"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/internal/drawview"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

type GetAdminActivityLogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// the activity plus both books
func NewGetAdminActivityLogic(ctx context.Context, svcCtx *svc.ServiceContext) *GetAdminActivityLogic {
	return &GetAdminActivityLogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

// GetAdminActivity reads the activity (GetActivity, scoped to the merchant) and both books from the inventory
// service's Books, which reads Redis without backfilling it, so "redis": null really
// means "not warm" (GetStock would warm it as a side effect).
func (l *GetAdminActivityLogic) GetAdminActivity(req *types.ActivityPathReq) (*types.AdminActivityResp, error) {
	mid, err := merchantFor(l.ctx, req.Id)
	if err != nil {
		return nil, err
	}
	a, err := l.svcCtx.Inventory.GetActivity(l.ctx, &inventoryclient.GetActivityReq{ActivityId: req.Id, MerchantId: mid})
	if err != nil {
		return nil, err
	}
	books, err := l.svcCtx.Inventory.Books(l.ctx, &inventoryclient.ReconcileReq{ActivityId: req.Id, MerchantId: mid})
	if err != nil {
		return nil, err
	}
	resp := &types.AdminActivityResp{
		ActivityResp: activityResp(a.GetActivity()),
		Redis:        redisBook(books.Redis),
		Db:           dbBook(books.Db),
		Draw:         drawView(a.GetActivity(), a.GetDraw()),
		Degraded:     l.svcCtx.Health.Degraded(req.Id),
	}
	resp.ActivityResp.Draw = nil // the admin view's draw (below) shows it, with the entries
	return resp, nil
}

// drawView is the activity's opening draw as the admin view shows it (nil: none).
func drawView(a *inventoryclient.Activity, d *inventoryclient.Draw) *types.DrawView {
	pub := drawview.Public(a)
	if d == nil || pub == nil {
		return nil
	}
	return &types.DrawView{DrawPublic: *pub, Entries: d.GetEntries(), Status: d.GetStatus(), Winners: d.GetWinners()}
}

func redisBook(s *inventoryclient.Stock) *types.RedisBook {
	if s == nil {
		return nil
	}
	return &types.RedisBook{Remaining: s.Remaining, Locked: s.Locked, Sold: s.Sold}
}

func dbBook(d *inventoryclient.DbStock) types.DbBook {
	if d == nil {
		return types.DbBook{}
	}
	return types.DbBook{Available: d.Available, Locked: d.Locked, Sold: d.Sold}
}
