package merchant

import (
	"context"

	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/api/internal/validate"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
)

type CreateActivityLogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// create a flash-sale activity for one SKU
func NewCreateActivityLogic(ctx context.Context, svcCtx *svc.ServiceContext) *CreateActivityLogic {
	return &CreateActivityLogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

// CreateActivity writes the activity and its inventory row (available = stock) in one
// MySQL transaction: there is never an activity without its book. Redis is untouched;
// warm-up (explicit or scheduled) or the first read loads it.
func (l *CreateActivityLogic) CreateActivity(req *types.CreateActivityReq) (*types.ActivityResp, error) {
	mid, err := auth.MID(l.ctx)
	if err != nil {
		return nil, err
	}
	if err := validate.CreateActivity(req); err != nil {
		return nil, err
	}
	var id int64
	err = l.svcCtx.DB.TransactCtx(l.ctx, func(ctx context.Context, s sqlx.Session) error {
		conn := sqlx.NewSqlConnFromSession(s)
		res, err := model.NewActivityModel(conn).Insert(ctx, &model.Activity{
			SkuId:             uint64(req.SkuId),
			Name:              req.Name,
			Total:             uint64(req.Stock),
			StartTime:         req.StartTime,
			EndTime:           req.EndTime,
			PerUserLimit:      uint64(req.PerUserLimit),
			PayTimeoutSeconds: uint64(req.PayTimeoutSeconds),
			MerchantId:        uint64(mid),
		})
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		_, err = model.NewInventoryModel(conn).Insert(ctx, &model.Inventory{
			ActivityId: uint64(id),
			Available:  uint64(req.Stock),
		})
		return err
	})
	if err != nil {
		return nil, xerr.Newf(xerr.Internal, "create activity: %v", err)
	}
	l.Infof("merchant %d created activity %d (sku %d, stock %d)", mid, id, req.SkuId, req.Stock)
	return &types.ActivityResp{
		ActivityId:        id,
		SkuId:             req.SkuId,
		Name:              req.Name,
		Stock:             req.Stock,
		StartTime:         req.StartTime,
		EndTime:           req.EndTime,
		PerUserLimit:      req.PerUserLimit,
		PayTimeoutSeconds: req.PayTimeoutSeconds,
	}, nil
}
