package model

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/zeromicro/go-zero/core/stores/sqlx"
)

// The statements of the writer's transaction (mq/internal/writer, txn.run), in the order it
// runs them: the inventory rows locked, the order rows locked and read, the new rows inserted,
// the existing ones moved, each activity's inventory changed. The MySQL book (degrade mode)
// runs InsertBatch, SetTradeNos and ApplyDelta too; the interfaces are inventorymodel.go's
// and seckillordermodel.go's.

func (m *customInventoryModel) FindEpochsForUpdate(ctx context.Context, session sqlx.Session,
	activityIDs []int64) (map[int64]int64, error) {
	epochs := make(map[int64]int64, len(activityIDs))
	if len(activityIDs) == 0 {
		return epochs, nil
	}
	var rows []struct {
		ActivityID int64 `db:"activity_id"`
		Epoch      int64 `db:"epoch"`
	}
	args := make([]any, len(activityIDs))
	for i, id := range activityIDs {
		args[i] = id
	}
	query := fmt.Sprintf(
		"SELECT `activity_id`, `epoch` FROM %s WHERE `activity_id` IN (%s) ORDER BY `activity_id` FOR UPDATE",
		m.table, strings.TrimSuffix(strings.Repeat("?, ", len(activityIDs)), ", "))
	if err := session.QueryRowsCtx(ctx, &rows, query, args...); err != nil {
		return nil, err
	}
	for _, r := range rows {
		epochs[r.ActivityID] = r.Epoch
	}
	return epochs, nil
}

func (m *customSeckillOrderModel) FindStatusesForUpdate(ctx context.Context, session sqlx.Session,
	orderNos []string) (map[string]string, error) {
	statuses := make(map[string]string, len(orderNos))
	if len(orderNos) == 0 {
		return statuses, nil
	}
	var rows []struct {
		OrderNo string `db:"order_no"`
		Status  string `db:"status"`
	}
	query := fmt.Sprintf("SELECT `order_no`, `status` FROM %s WHERE `order_no` IN (%s) FOR UPDATE",
		m.table, orderPlaceholders(len(orderNos)))
	if err := session.QueryRowsCtx(ctx, &rows, query, orderArgs(orderNos)...); err != nil {
		return nil, err
	}
	for _, row := range rows {
		statuses[row.OrderNo] = row.Status
	}
	return statuses, nil
}

func (m *customSeckillOrderModel) InsertBatch(ctx context.Context, session sqlx.Session, orders []*SeckillOrder) error {
	if len(orders) == 0 {
		return nil
	}
	const row = "(?, ?, ?, ?, ?, ?, ?, ?, ?)"
	query := fmt.Sprintf("INSERT INTO %s (%s) VALUES %s", m.table, seckillOrderRowsExpectAutoSet,
		strings.TrimSuffix(strings.Repeat(row+", ", len(orders)), ", "))
	args := make([]any, 0, 9*len(orders))
	for _, o := range orders {
		args = append(args, o.OrderNo, o.RequestId, o.ActivityId, o.Uid, o.Quantity, o.Status, o.ExpireAt, o.PlacedAt,
			o.TradeNo)
	}
	_, err := session.ExecCtx(ctx, query, args...)
	return err
}

func (m *customSeckillOrderModel) SetStatus(ctx context.Context, session sqlx.Session, status string,
	orderNos []string) error {
	if len(orderNos) == 0 {
		return nil
	}
	query := fmt.Sprintf("UPDATE %s SET `status` = ? WHERE `status` <> ? AND `order_no` IN (%s)",
		m.table, orderPlaceholders(len(orderNos)))
	_, err := session.ExecCtx(ctx, query, append([]any{status, status}, orderArgs(orderNos)...)...)
	return err
}

func (m *customSeckillOrderModel) SetTradeNos(ctx context.Context, session sqlx.Session,
	trades map[string]string) error {
	if len(trades) == 0 {
		return nil
	}
	orderNos := slices.Sorted(maps.Keys(trades)) // one statement text per count, rows locked in order
	args := make([]any, 0, 3*len(orderNos))
	for _, o := range orderNos {
		args = append(args, o, trades[o])
	}
	query := fmt.Sprintf("UPDATE %s SET `trade_no` = CASE `order_no` %s END WHERE `order_no` IN (%s)",
		m.table, strings.TrimSuffix(strings.Repeat("WHEN ? THEN ? ", len(orderNos)), " "),
		orderPlaceholders(len(orderNos)))
	_, err := session.ExecCtx(ctx, query, append(args, orderArgs(orderNos)...)...)
	return err
}

// InventoryDelta is a change of an inventory row with each column's increase and decrease
// apart, so that the UPDATE adds before it subtracts: a change whose net effect is valid
// never underflows an UNSIGNED column in between.
type InventoryDelta struct {
	AvailablePlus, AvailableMinus int64
	LockedPlus, LockedMinus       int64
	SoldPlus, SoldMinus           int64
}

// Add adds a change of the three columns.
func (d *InventoryDelta) Add(available, locked, sold int64) {
	split := func(v int64, plus, minus *int64) {
		if v > 0 {
			*plus += v
		} else {
			*minus -= v
		}
	}
	split(available, &d.AvailablePlus, &d.AvailableMinus)
	split(locked, &d.LockedPlus, &d.LockedMinus)
	split(sold, &d.SoldPlus, &d.SoldMinus)
}

// IsZero reports a delta that changes no column.
func (d InventoryDelta) IsZero() bool {
	return d.AvailablePlus == d.AvailableMinus && d.LockedPlus == d.LockedMinus && d.SoldPlus == d.SoldMinus
}

func (m *customInventoryModel) ApplyDelta(ctx context.Context, session sqlx.Session, activityID int64,
	d InventoryDelta) error {
	query := fmt.Sprintf("UPDATE %s SET `available` = `available` + ? - ?, `locked` = `locked` + ? - ?, "+
		"`sold` = `sold` + ? - ? WHERE `activity_id` = ?", m.table)
	result, err := session.ExecCtx(ctx, query, d.AvailablePlus, d.AvailableMinus, d.LockedPlus, d.LockedMinus,
		d.SoldPlus, d.SoldMinus, activityID)
	if err != nil {
		return err
	}
	n, err := result.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// orderPlaceholders is "?, ?, ..." for n values (an IN list).
func orderPlaceholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func orderArgs(orderNos []string) []any {
	args := make([]any, len(orderNos))
	for i, o := range orderNos {
		args[i] = o
	}
	return args
}
