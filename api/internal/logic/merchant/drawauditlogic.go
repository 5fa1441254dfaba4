// Code scaffolded by goctl. Safe to edit.
// goctl 1.10.2

package merchant

import (
	"context"
	"time"

	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/zrpc"
	"google.golang.org/grpc"

	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

type DrawAuditLogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// the audit of the activity's opening draw, for the merchant to publish
func NewDrawAuditLogic(ctx context.Context, svcCtx *svc.ServiceContext) *DrawAuditLogic {
	return &DrawAuditLogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

// DrawAudit passes on the inventory service's audit of the merchant's activity's draw.
func (l *DrawAuditLogic) DrawAudit(req *types.ActivityPathReq) (*types.DrawAuditResp, error) {
	mid, err := merchantFor(l.ctx, req.Id)
	if err != nil {
		return nil, err
	}
	// The route's timeout (seckill.api, as Reconcile's) bounds the call, not the client's 2 s
	// for the sale: an audit of 20,000 entrants can outlast it under load.
	var opts []grpc.CallOption
	if dl, ok := l.ctx.Deadline(); ok {
		opts = append(opts, zrpc.WithCallTimeout(time.Until(dl)))
	}
	res, err := l.svcCtx.Inventory.DrawAudit(l.ctx, &inventoryclient.GetActivityReq{ActivityId: req.Id, MerchantId: mid},
		opts...)
	if err != nil {
		return nil, err
	}
	out := &types.DrawAuditResp{Stock: res.GetStock(), Commitment: res.GetCommitment(), Seed: res.GetSeed(),
		Status: res.GetStatus(), Entrants: make([]types.DrawEntrant, len(res.GetEntrants())),
		Winners: res.GetWinners()}
	for i, e := range res.GetEntrants() {
		out.Entrants[i] = types.DrawEntrant{Uid: e.GetUid(), Quantity: e.GetQuantity()}
	}
	if out.Winners == nil {
		out.Winners = []int64{}
	}
	return out, nil
}
