package merchant

import (
	"context"

	"github.com/seckill/seckill/api/internal/svc"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/rpc/inventoryclient"

	"github.com/zeromicro/go-zero/core/logx"
)

type ListOrdersLogic struct {
	logx.Logger
	ctx    context.Context
	svcCtx *svc.ServiceContext
}

// the activity's orders in row id order; with Accept: text/csv every matching order as CSV
func NewListOrdersLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ListOrdersLogic {
	return &ListOrdersLogic{
		Logger: logx.WithContext(ctx),
		ctx:    ctx,
		svcCtx: svcCtx,
	}
}

// ListOrders is a page of the merchant's activity's orders as MySQL holds them, in row id
// order, after the cursor: the inventory service's Orders call (the gateway has no database).
func (l *ListOrdersLogic) ListOrders(req *types.OrderListReq) (*types.OrderListResp, error) {
	in, err := ordersReq(l.ctx, req)
	if err != nil {
		return nil, err
	}
	if err := validateSize(req.Size); err != nil {
		return nil, err
	}
	res, err := l.svcCtx.Inventory.Orders(l.ctx, in)
	if err != nil {
		return nil, err
	}
	rows := res.GetOrders()
	out := &types.OrderListResp{Orders: make([]types.OrderItem, len(rows))}
	for i, o := range rows {
		out.Orders[i] = orderItem(o)
	}
	if res.GetMore() && len(rows) > 0 {
		out.NextCursor = encodeOrderCursor(rows[len(rows)-1].GetId())
	}
	return out, nil
}

// ordersReq checks what a list and an export share (the merchant, the activity, the status,
// the cursor) and is the inventory service's request for them.
func ordersReq(ctx context.Context, req *types.OrderListReq) (*inventoryclient.OrdersReq, error) {
	mid, err := merchantFor(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	if err := domain.CheckOrderStatus(req.Status); err != nil {
		return nil, err
	}
	after, err := decodeOrderCursor(req.Cursor)
	if err != nil {
		return nil, err
	}
	return &inventoryclient.OrdersReq{ActivityId: req.Id, MerchantId: mid, Status: req.Status,
		AfterId: after, Size: req.Size}, nil
}

// validateSize checks a page's size (1..500; an export checks it too, and does not use it).
func validateSize(size int64) error { return domain.CheckOrderListSize(size) }

// orderItem is an order as the API shows it.
func orderItem(o *inventoryclient.OrderRow) types.OrderItem {
	return types.OrderItem{OrderNo: o.GetOrderNo(), Uid: o.GetUid(), Quantity: o.GetQuantity(),
		Amount: o.GetAmount(), Status: o.GetStatus(), TradeNo: o.GetTradeNo(),
		CreatedAt: o.GetCreatedAt(), UpdatedAt: o.GetUpdatedAt()}
}
