package logic

import (
	"context"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type ListActiveLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewListActiveLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ListActiveLogic {
	return &ListActiveLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

func (l *ListActiveLogic) ListActive(in *inventory.ActiveReq) (*inventory.ActiveResp, error) {
	since := time.Now().Unix() - l.svcCtx.Config.Stock.GraceSeconds
	due, err := l.svcCtx.Store.Active(l.ctx, since, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	return &inventory.ActiveResp{ActivityIds: slices.Sorted(maps.Keys(due))}, nil
}
