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

type DrawAuditLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewDrawAuditLogic(ctx context.Context, svcCtx *svc.ServiceContext) *DrawAuditLogic {
	return &DrawAuditLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

// DrawAudit is the audit of the merchant's activity's draw (docs/API.md, "The opening draw"):
// the stock it served, the seed's commitment, the seed once done, every entrant and the winners.
// Entrants and winners come from Redis while it holds the entries (what the draw read), else
// from MySQL (draw_entry, and the orders under the entries' request ids). It logs nothing.
func (l *DrawAuditLogic) DrawAudit(in *inventory.GetActivityReq) (*inventory.DrawAuditResp, error) {
	if err := domain.CheckActivityID(in.ActivityId); err != nil {
		return nil, err
	}
	a, err := ownedActivity(l.ctx, l.svcCtx, in.ActivityId, in.MerchantId)
	if err != nil {
		return nil, err
	}
	out := &inventory.DrawAuditResp{ActivityId: in.ActivityId, Stock: a.DrawStock.Int64,
		Status: drawPending, Entrants: []*inventory.DrawEntrant{}, Winners: []int64{}}
	if a.DrawSeconds == 0 {
		out.Commitment, out.Seed = activity.PublicDrawOf(a)
		return out, nil
	}
	p, err := l.svcCtx.Store.Draw(l.ctx, in.ActivityId)
	if err != nil {
		return nil, err
	}
	out.Status = drawStatus(a, p)
	// The row was read before Redis: a draw finishing in between is done in Redis (set after
	// MySQL's draw_done_at) and not in the row. Done either way shows the seed.
	out.Commitment, out.Seed = activity.PublicDraw([]byte(a.DrawSeed), out.Status == domain.DrawDone)
	entries, won, err := l.entrants(in.ActivityId)
	if err != nil {
		return nil, err
	}
	for i, e := range entries {
		out.Entrants = append(out.Entrants, &inventory.DrawEntrant{Uid: e.UID, Quantity: e.Qty})
		if won[i] {
			out.Winners = append(out.Winners, e.UID)
		}
	}
	return out, nil
}

// entrants are the draw's entries by uid and whether each holds an order under its entry's
// request id.
func (l *DrawAuditLogic) entrants(aid int64) ([]domain.DrawEntry, []bool, error) {
	entries, err := l.svcCtx.Store.DrawEntries(l.ctx, aid)
	if err != nil {
		return nil, nil, err
	}
	if len(entries) > 0 {
		won, err := l.svcCtx.Store.DrawServed(l.ctx, aid, entries)
		return entries, won, err
	}
	if l.svcCtx.Loader.Entries == nil {
		return nil, nil, nil
	}
	rows, err := l.svcCtx.Loader.Entries.FindByActivity(l.ctx, aid)
	if err != nil {
		return nil, nil, activity.DBError(fmt.Errorf("draw entries of activity %d: %w", aid, err))
	}
	orders, err := l.svcCtx.Orders.FindAuditByActivity(l.ctx, aid)
	if err != nil {
		return nil, nil, activity.DBError(fmt.Errorf("orders of activity %d: %w", aid, err))
	}
	entries, won := entriesWon(rows, orders)
	return entries, won, nil
}

// entriesWon pairs MySQL's entries (by uid) with the orders made under their request ids.
func entriesWon(rows []*model.DrawEntry, orders []*model.OrderAudit) ([]domain.DrawEntry, []bool) {
	type key struct {
		uid uint64
		rid string
	}
	ordered := make(map[key]bool, len(orders))
	for _, o := range orders {
		ordered[key{o.Uid, o.RequestId}] = true
	}
	entries := make([]domain.DrawEntry, len(rows))
	won := make([]bool, len(rows))
	for i, r := range rows {
		entries[i] = domain.DrawEntry{UID: int64(r.Uid), Qty: int64(r.Quantity), RequestID: r.RequestId}
		won[i] = ordered[key{r.Uid, r.RequestId}]
	}
	return entries, won
}
