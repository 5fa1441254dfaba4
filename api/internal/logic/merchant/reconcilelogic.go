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

type ReconcileLogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// compare Redis and MySQL now
func NewReconcileLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ReconcileLogic {
	return &ReconcileLogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

// Reconcile passes on the inventory service's comparison (the logic lives there).
func (l *ReconcileLogic) Reconcile(req *types.ActivityPathReq) (*types.ReconcileResp, error) {
	mid, err := merchantFor(l.ctx, req.Id)
	if err != nil {
		return nil, err
	}
	// The route's timeout (seckill.api) bounds the call, not the client's 2 s for the sale.
	var opts []grpc.CallOption
	if dl, ok := l.ctx.Deadline(); ok {
		opts = append(opts, zrpc.WithCallTimeout(time.Until(dl)))
	}
	res, err := l.svcCtx.Inventory.Reconcile(l.ctx, &inventoryclient.ReconcileReq{ActivityId: req.Id, MerchantId: mid},
		opts...)
	if err != nil {
		return nil, err
	}
	diffs := res.Diffs
	if diffs == nil {
		diffs = []string{}
	}
	return &types.ReconcileResp{
		ActivityId: res.ActivityId,
		Status:     res.Status,
		Redis:      redisBook(res.Redis),
		Db:         dbBook(res.Db),
		InFlight:   res.InFlight,
		Diffs:      diffs,
	}, nil
}
