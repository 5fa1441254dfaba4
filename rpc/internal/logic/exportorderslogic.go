package logic

import (
	"context"

	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

// exportPageSize is the orders ExportOrders reads from MySQL and sends in one message.
const exportPageSize = 1000

type ExportOrdersLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewExportOrdersLogic(ctx context.Context, svcCtx *svc.ServiceContext) *ExportOrdersLogic {
	return &ExportOrdersLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

// ExportOrders streams every matching order of the merchant's activity after in.AfterId, in
// row id order: one keyset page of exportPageSize read from MySQL, sent, then the next, so the
// service holds one page at a time (in.Size is not used). The first message comes after the
// checks (ACTIVITY_NOT_FOUND, INVALID_ARGUMENT end the stream before any), even when it holds
// no order; the stream ends after the first page that was not full. The caller's deadline
// (the gateway's Orders.ExportTimeout) bounds it.
func (l *ExportOrdersLogic) ExportOrders(in *inventory.OrdersReq, stream inventory.Inventory_ExportOrdersServer) error {
	p, err := newOrderPager(l.ctx, l.svcCtx, in)
	if err != nil {
		return err
	}
	for {
		page, err := p.next(exportPageSize)
		if err != nil {
			return err
		}
		if err := stream.Send(page); err != nil {
			return err
		}
		if !page.More {
			return nil
		}
	}
}
