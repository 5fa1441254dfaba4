package logic

import (
	"context"
	"fmt"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/activity"
	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

type OrdersLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewOrdersLogic(ctx context.Context, svcCtx *svc.ServiceContext) *OrdersLogic {
	return &OrdersLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

// Orders is a page of the merchant's activity's orders as MySQL holds them, in row id order,
// after in.AfterId (one keyset read, SeckillOrderModel.FindPageByActivityStatus). Another
// merchant's activity is ACTIVITY_NOT_FOUND, like a missing one.
func (l *OrdersLogic) Orders(in *inventory.OrdersReq) (*inventory.OrdersResp, error) {
	if err := domain.CheckOrderListSize(in.Size); err != nil {
		return nil, err
	}
	o, err := newOrderPager(l.ctx, l.svcCtx, in)
	if err != nil {
		return nil, err
	}
	return o.next(int(in.Size))
}

// orderPager reads one activity's orders page after page (Orders: one page; ExportOrders:
// every page).
type orderPager struct {
	ctx    context.Context
	orders model.SeckillOrderModel
	aid    int64
	status string
	price  int64
	after  uint64
}

// newOrderPager checks in (the activity, the merchant's ownership, the status) and starts
// after in.AfterId.
func newOrderPager(ctx context.Context, svcCtx *svc.ServiceContext, in *inventory.OrdersReq) (*orderPager, error) {
	if err := domain.CheckActivityID(in.ActivityId); err != nil {
		return nil, err
	}
	if err := domain.CheckOrderStatus(in.Status); err != nil {
		return nil, err
	}
	a, err := ownedActivity(ctx, svcCtx, in.ActivityId, in.MerchantId)
	if err != nil {
		return nil, err
	}
	return &orderPager{ctx: ctx, orders: svcCtx.Orders, aid: in.ActivityId, status: in.Status,
		price: int64(a.Price), after: in.AfterId}, nil
}

// next reads up to size orders after the last one read; More when the page was full.
func (p *orderPager) next(size int) (*inventory.OrdersResp, error) {
	rows, err := p.orders.FindPageByActivityStatus(p.ctx, p.aid, p.status, p.after, size)
	if err != nil {
		return nil, activity.DBError(fmt.Errorf("orders of activity %d: %w", p.aid, err))
	}
	out := &inventory.OrdersResp{Orders: make([]*inventory.OrderRow, len(rows)), More: len(rows) == size}
	for i, r := range rows {
		out.Orders[i] = p.row(r)
	}
	if len(rows) > 0 {
		p.after = rows[len(rows)-1].Id
	}
	return out, nil
}

// row is an order as the merchant's list shows it: created_at is when it was reserved
// (placed_at; a row from before placed_at existed has 0 there: its row's creation).
func (p *orderPager) row(r *model.SeckillOrder) *inventory.OrderRow {
	created := r.PlacedAt
	if created == 0 {
		created = r.CreateTime.Unix()
	}
	return &inventory.OrderRow{Id: r.Id, OrderNo: r.OrderNo, Uid: int64(r.Uid), Quantity: int64(r.Quantity),
		Amount: int64(r.Quantity) * p.price, Status: r.Status, TradeNo: r.TradeNo,
		CreatedAt: created, UpdatedAt: r.UpdateTime.Unix()}
}
