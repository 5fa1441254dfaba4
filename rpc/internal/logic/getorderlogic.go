package logic

import (
	"context"
	"errors"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"

	"github.com/seckill/seckill/rpc/internal/activity"
	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type GetOrderLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewGetOrderLogic(ctx context.Context, svcCtx *svc.ServiceContext) *GetOrderLogic {
	return &GetOrderLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

func (l *GetOrderLogic) GetOrder(in *inventory.OrderReq) (*inventory.GetOrderResp, error) {
	// The caller's uid is required: there is no "any owner" read.
	if in.Uid < 1 {
		return nil, xerr.New(xerr.InvalidArgument, "uid must be >= 1 (the order's owner)")
	}
	// A number this service cannot have issued (its tag is wrong) is ORDER_NOT_FOUND by its
	// shape: it never reaches Redis or MySQL.
	aid, err := l.svcCtx.Store.CheckOrderNo(in.OrderNo)
	if err != nil {
		return nil, err
	}
	o, err := l.svcCtx.Store.Order(l.ctx, in.OrderNo)
	if xerr.CodeOf(err) == xerr.OrderNotFound {
		// Not in Redis. If the activity is not either, resolve that first: a lost activity
		// is rebuilt (BUSY meanwhile) and then answers from Redis.
		if err = l.svcCtx.Book.Backfill(l.ctx, aid, true); err == nil {
			o, err = l.svcCtx.Store.Order(l.ctx, in.OrderNo)
		}
	}
	if xerr.CodeOf(err) == xerr.OrderNotFound || xerr.CodeOf(err) == xerr.ActivityNotFound {
		// No longer in Redis: the activity's keys expired; MySQL has the book.
		o, err = l.fromMySQL(in.OrderNo)
	}
	if err != nil {
		return nil, err
	}
	if o.UID != in.Uid {
		return nil, xerr.ErrOrderNotFound
	}
	amount, err := l.svcCtx.Prices.Amount(l.ctx, o.ActivityID, o.Quantity)
	if err != nil {
		return nil, err
	}
	return &inventory.GetOrderResp{Order: &inventory.Order{OrderNo: o.OrderNo, ActivityId: o.ActivityID,
		Uid: o.UID, Quantity: o.Quantity, Status: o.State, ExpireAt: o.ExpireAt / 1000,
		CreatedAt: o.CreatedAt / 1000, RequestId: o.RequestID, Amount: amount}}, nil
}

func (l *GetOrderLogic) fromMySQL(orderNo string) (domain.Order, error) {
	row, err := l.svcCtx.Orders.FindOneByOrderNo(l.ctx, orderNo)
	if errors.Is(err, model.ErrNotFound) {
		return domain.Order{}, xerr.ErrOrderNotFound
	}
	if err != nil {
		return domain.Order{}, activity.DBError(err)
	}
	return domain.Order{OrderNo: row.OrderNo, ActivityID: int64(row.ActivityId), UID: int64(row.Uid),
		Quantity: int64(row.Quantity), State: row.Status, ExpireAt: row.ExpireAt * 1000,
		CreatedAt: row.PlacedAt * 1000, RequestID: row.RequestId}, nil
}
