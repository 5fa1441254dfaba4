package model

import (
	"context"
	"fmt"
	"strings"

	"github.com/zeromicro/go-zero/core/stores/sqlx"
)

var _ SeckillOrderModel = (*customSeckillOrderModel)(nil)

type (
	// SeckillOrderModel is an interface to be customized, add more methods here,
	// and implement the added methods in customSeckillOrderModel.
	SeckillOrderModel interface {
		seckillOrderModel
		withSession(session sqlx.Session) SeckillOrderModel
		// FindStatusesForUpdate returns the status of each of orderNos that has a row
		// (order_no -> status), locking those rows until session's transaction ends.
		FindStatusesForUpdate(ctx context.Context, session sqlx.Session, orderNos []string) (map[string]string, error)
		// InsertBatch inserts orders in one statement inside session.
		InsertBatch(ctx context.Context, session sqlx.Session, orders []*SeckillOrder) error
		// SetStatus moves the orders orderNos not already in status to status, inside session.
		SetStatus(ctx context.Context, session sqlx.Session, status string, orderNos []string) error
		// FindStatesByActivity returns the number, status and quantity of every order of
		// an activity inside session, in no particular order.
		FindStatesByActivity(ctx context.Context, session sqlx.Session, activityID int64) ([]*OrderState, error)
		// FindPageByActivity returns up to limit of an activity's orders with id > afterID,
		// by id: the rebuild of Redis pages through them.
		FindPageByActivity(ctx context.Context, activityID int64, afterID uint64, limit int) ([]*SeckillOrder, error)
		// FindPageByActivityStatus is FindPageByActivity of the orders in status only (the
		// merchant's orders list; FindPageByActivity when status is "").
		FindPageByActivityStatus(ctx context.Context, activityID int64, status string, afterID uint64,
			limit int) ([]*SeckillOrder, error)
		// FindAuditByActivity returns every order of an activity with its buyer and request
		// id, in no particular order (the fault suite's audit: duplicates, per-user limits).
		FindAuditByActivity(ctx context.Context, activityID int64) ([]*OrderAudit, error)
		// FindOverdueReserved returns up to limit orders still reserved whose expire_at
		// (unix s) is before `before`, oldest first: the sweep's candidates.
		FindOverdueReserved(ctx context.Context, before int64, limit int) ([]*SeckillOrder, error)
		// ExpireReserved moves one order from reserved to expired inside session; false when
		// it was no longer reserved (nothing changed).
		ExpireReserved(ctx context.Context, session sqlx.Session, orderNo string) (bool, error)
		// FindByRequests returns the orders that any of reqs (a buyer and a request id) made in
		// an activity, inside session, in no particular order.
		FindByRequests(ctx context.Context, session sqlx.Session, activityID int64,
			reqs []OrderRequest) ([]*SeckillOrder, error)
		// FindForUpdate returns an order by number, locking its row until session's
		// transaction ends (ErrNotFound: none).
		FindForUpdate(ctx context.Context, session sqlx.Session, orderNo string) (*SeckillOrder, error)
		// SumHeldByUsers is the quantity each of uids holds in an activity (reserved and paid
		// orders; a buyer holding nothing is absent), inside session: degrade mode's per-user limit.
		SumHeldByUsers(ctx context.Context, session sqlx.Session, activityID int64,
			uids []int64) (map[int64]int64, error)
		// MoveStatus moves one order from status `from` to `to` inside session; false when
		// it was not in `from` (nothing changed).
		MoveStatus(ctx context.Context, session sqlx.Session, orderNo, from, to string) (bool, error)
		// FindDueReservedByActivity returns up to limit reserved orders of an activity whose
		// expire_at (unix s) is before `before`, oldest first: degrade mode's expiry.
		FindDueReservedByActivity(ctx context.Context, activityID, before int64, limit int) ([]*SeckillOrder, error)
		// SetTradeNos keeps the payment provider's trade_no with each order of trades (order_no
		// -> trade_no) inside session, in one statement.
		SetTradeNos(ctx context.Context, session sqlx.Session, trades map[string]string) error
		// FindOrderNoByTradeNo is the order a trade_no paid ("" for none), inside session.
		FindOrderNoByTradeNo(ctx context.Context, session sqlx.Session, tradeNo string) (string, error)
	}

	customSeckillOrderModel struct {
		*defaultSeckillOrderModel
	}
)

// NewSeckillOrderModel returns a model for the database table.
func NewSeckillOrderModel(conn sqlx.SqlConn) SeckillOrderModel {
	return &customSeckillOrderModel{
		defaultSeckillOrderModel: newSeckillOrderModel(conn),
	}
}

func (m *customSeckillOrderModel) withSession(session sqlx.Session) SeckillOrderModel {
	return NewSeckillOrderModel(sqlx.NewSqlConnFromSession(session))
}

// OrderState is an order's number, status and quantity.
type OrderState struct {
	OrderNo  string `db:"order_no"`
	Status   string `db:"status"`
	Quantity uint64 `db:"quantity"`
	ExpireAt int64  `db:"expire_at"` // unix s
}

func (m *customSeckillOrderModel) FindStatesByActivity(ctx context.Context, session sqlx.Session,
	activityID int64) ([]*OrderState, error) {
	query := fmt.Sprintf("select `order_no`, `status`, `quantity`, `expire_at` from %s where `activity_id` = ?", m.table)
	var resp []*OrderState
	if err := session.QueryRowsCtx(ctx, &resp, query, activityID); err != nil {
		return nil, err
	}
	return resp, nil
}

// OrderAudit is an order's number, buyer, request id, quantity and status.
type OrderAudit struct {
	OrderNo   string `db:"order_no"`
	Uid       uint64 `db:"uid"`
	RequestId string `db:"request_id"`
	Quantity  uint64 `db:"quantity"`
	Status    string `db:"status"`
}

func (m *customSeckillOrderModel) FindAuditByActivity(ctx context.Context, activityID int64) ([]*OrderAudit, error) {
	query := fmt.Sprintf(
		"select `order_no`, `uid`, `request_id`, `quantity`, `status` from %s where `activity_id` = ?", m.table)
	var resp []*OrderAudit
	if err := m.conn.QueryRowsCtx(ctx, &resp, query, activityID); err != nil {
		return nil, err
	}
	return resp, nil
}

func (m *customSeckillOrderModel) FindPageByActivity(ctx context.Context, activityID int64, afterID uint64,
	limit int) ([]*SeckillOrder, error) {
	query := fmt.Sprintf("select %s from %s where `activity_id` = ? and `id` > ? order by `id` limit ?",
		seckillOrderRows, m.table)
	var resp []*SeckillOrder
	if err := m.conn.QueryRowsCtx(ctx, &resp, query, activityID, afterID, limit); err != nil {
		return nil, err
	}
	return resp, nil
}

func (m *customSeckillOrderModel) FindPageByActivityStatus(ctx context.Context, activityID int64, status string,
	afterID uint64, limit int) ([]*SeckillOrder, error) {
	if status == "" {
		return m.FindPageByActivity(ctx, activityID, afterID, limit)
	}
	query := fmt.Sprintf("select %s from %s where `activity_id` = ? and `status` = ? and `id` > ? order by `id` limit ?",
		seckillOrderRows, m.table)
	var resp []*SeckillOrder
	if err := m.conn.QueryRowsCtx(ctx, &resp, query, activityID, status, afterID, limit); err != nil {
		return nil, err
	}
	return resp, nil
}

func (m *customSeckillOrderModel) FindOverdueReserved(
	ctx context.Context, before int64, limit int,
) ([]*SeckillOrder, error) {
	query := fmt.Sprintf("select %s from %s where `status` = 'reserved' and `expire_at` < ? order by `expire_at` limit ?",
		seckillOrderRows, m.table)
	var resp []*SeckillOrder
	if err := m.conn.QueryRowsCtx(ctx, &resp, query, before, limit); err != nil {
		return nil, err
	}
	return resp, nil
}

func (m *customSeckillOrderModel) ExpireReserved(
	ctx context.Context, session sqlx.Session, orderNo string,
) (bool, error) {
	query := fmt.Sprintf("update %s set `status` = 'expired' where `order_no` = ? and `status` = 'reserved'", m.table)
	res, err := session.ExecCtx(ctx, query, orderNo)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// byRequestKey makes a lookup of given buyers' orders in an activity read them through the key
// (activity_id, uid, request_id): a few index reads per buyer. Left to choose, MariaDB picks by
// the table's statistics, which InnoDB recounts in the background at most every 10 s: on a table
// filled since (degrade mode starts on one the writer just filled) it used activity_id alone and
// read every order of the activity (rpc/internal/book TestMySQLBatchReadsOnlyItsBuyersRows).
const byRequestKey = "force index (`uk_activity_uid_request`)"

// OrderRequest is a buyer and one of their request ids: the key of the order the request made.
type OrderRequest struct {
	Uid       int64
	RequestId string
}

func (m *customSeckillOrderModel) FindByRequests(ctx context.Context, session sqlx.Session, activityID int64,
	reqs []OrderRequest) ([]*SeckillOrder, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	query := fmt.Sprintf("select %s from %s %s where `activity_id` = ? and (`uid`, `request_id`) in (%s)",
		seckillOrderRows, m.table, byRequestKey, strings.TrimSuffix(strings.Repeat("(?, ?), ", len(reqs)), ", "))
	args := make([]any, 0, 1+2*len(reqs))
	args = append(args, activityID)
	for _, r := range reqs {
		args = append(args, r.Uid, r.RequestId)
	}
	var resp []*SeckillOrder
	if err := session.QueryRowsCtx(ctx, &resp, query, args...); err != nil {
		return nil, err
	}
	return resp, nil
}

func (m *customSeckillOrderModel) FindForUpdate(
	ctx context.Context, session sqlx.Session, orderNo string,
) (*SeckillOrder, error) {
	query := fmt.Sprintf("select %s from %s where `order_no` = ? limit 1 for update", seckillOrderRows, m.table)
	var resp SeckillOrder
	switch err := session.QueryRowCtx(ctx, &resp, query, orderNo); err {
	case nil:
		return &resp, nil
	case sqlx.ErrNotFound:
		return nil, ErrNotFound
	default:
		return nil, err
	}
}

func (m *customSeckillOrderModel) SumHeldByUsers(ctx context.Context, session sqlx.Session, activityID int64,
	uids []int64) (map[int64]int64, error) {
	held := make(map[int64]int64, len(uids))
	if len(uids) == 0 {
		return held, nil
	}
	query := fmt.Sprintf("select `uid`, sum(`quantity`) as `held` from %s %s where `activity_id` = ? and `uid` in (%s) "+
		"and `status` in ('reserved', 'paid') group by `uid`", m.table, byRequestKey, orderPlaceholders(len(uids)))
	args := make([]any, 0, 1+len(uids))
	args = append(args, activityID)
	for _, u := range uids {
		args = append(args, u)
	}
	var rows []struct {
		Uid  int64 `db:"uid"`
		Held int64 `db:"held"`
	}
	if err := session.QueryRowsCtx(ctx, &rows, query, args...); err != nil {
		return nil, err
	}
	for _, r := range rows {
		held[r.Uid] = r.Held
	}
	return held, nil
}

func (m *customSeckillOrderModel) MoveStatus(
	ctx context.Context, session sqlx.Session, orderNo, from, to string,
) (bool, error) {
	query := fmt.Sprintf("update %s set `status` = ? where `order_no` = ? and `status` = ?", m.table)
	res, err := session.ExecCtx(ctx, query, to, orderNo, from)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (m *customSeckillOrderModel) FindDueReservedByActivity(ctx context.Context, activityID, before int64,
	limit int) ([]*SeckillOrder, error) {
	query := fmt.Sprintf("select %s from %s where `activity_id` = ? and `status` = 'reserved' and `expire_at` < ? "+
		"order by `expire_at` limit ?", seckillOrderRows, m.table)
	var resp []*SeckillOrder
	if err := m.conn.QueryRowsCtx(ctx, &resp, query, activityID, before, limit); err != nil {
		return nil, err
	}
	return resp, nil
}

func (m *customSeckillOrderModel) FindOrderNoByTradeNo(ctx context.Context, session sqlx.Session,
	tradeNo string) (string, error) {
	var orderNo string
	err := session.QueryRowCtx(ctx, &orderNo, "SELECT `order_no` FROM "+m.table+" WHERE `trade_no` = ? LIMIT 1",
		tradeNo)
	if err == sqlx.ErrNotFound {
		return "", nil
	}
	return orderNo, err
}
