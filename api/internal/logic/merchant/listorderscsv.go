package merchant

import (
	"context"
	"encoding/csv"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/zeromicro/go-zero/core/logc"
	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/seckill/seckill/api/internal/reply"
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// csvHeader is the CSV export's header line (docs/API.md).
var csvHeader = []string{"order_no", "uid", "quantity", "amount", "status", "trade_no", "created_at", "updated_at"}

// ExportCSV answers every matching order (after the cursor, if one is given; size is checked
// but not used) as CSV, streamed end to end: the inventory service's ExportOrders stream, one
// page per message, each written and flushed before the next is read, so neither service
// holds more than a page. An error before the first page is the usual JSON error; one after
// the 200 went out breaks the connection (reply.Abort), so a client never takes a cut export
// for a whole one. Orders.ExportTimeout bounds the stream.
func (l *ListOrdersLogic) ExportCSV(req *types.OrderListReq, w http.ResponseWriter) {
	in, err := ordersReq(l.ctx, req)
	if err == nil {
		err = validateSize(req.Size)
	}
	if err != nil {
		httpx.ErrorCtx(l.ctx, w, err)
		return
	}
	ctx, cancel := context.WithTimeout(l.ctx, l.svcCtx.Config.Orders.ExportTimeout)
	defer cancel()
	stream, err := l.svcCtx.Inventory.ExportOrders(ctx, in)
	var page *inventoryclient.OrdersResp
	if err == nil {
		page, err = stream.Recv()
	}
	if errors.Is(err, io.EOF) {
		err = xerr.New(xerr.Internal, "the export stream ended before its first page")
	}
	if err != nil {
		httpx.ErrorCtx(l.ctx, w, err)
		return
	}
	w.Header().Set("Content-Type", reply.CSVType)
	w.Header().Set("Cache-Control", "no-store")
	cw := csv.NewWriter(w)
	err = cw.Write(csvHeader)
	for err == nil {
		err = writeCSVPage(cw, w, page)
		if err == nil {
			page, err = stream.Recv()
		}
	}
	if errors.Is(err, io.EOF) {
		return
	}
	logc.Errorf(l.ctx, "orders export of activity %d broken mid-stream: %v", req.Id, err)
	reply.Abort(w)
}

// writeCSVPage writes page's orders as CSV rows and flushes them to the client.
func writeCSVPage(cw *csv.Writer, w http.ResponseWriter, page *inventoryclient.OrdersResp) error {
	rec := make([]string, len(csvHeader))
	for _, o := range page.GetOrders() {
		rec[0], rec[1] = o.GetOrderNo(), strconv.FormatInt(o.GetUid(), 10)
		rec[2], rec[3] = strconv.FormatInt(o.GetQuantity(), 10), strconv.FormatInt(o.GetAmount(), 10)
		rec[4], rec[5] = o.GetStatus(), o.GetTradeNo()
		rec[6], rec[7] = strconv.FormatInt(o.GetCreatedAt(), 10), strconv.FormatInt(o.GetUpdatedAt(), 10)
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return reply.Flush(w)
}
