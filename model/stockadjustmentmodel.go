package model

import (
	"context"
	"fmt"

	"github.com/zeromicro/go-zero/core/stores/sqlx"
)

var _ StockAdjustmentModel = (*customStockAdjustmentModel)(nil)

type (
	// StockAdjustmentModel is an interface to be customized, add more methods here,
	// and implement the added methods in customStockAdjustmentModel.
	StockAdjustmentModel interface {
		stockAdjustmentModel
		withSession(session sqlx.Session) StockAdjustmentModel
		// InsertIgnore records the adjustment eventID once inside session: false when
		// eventID was recorded before (nothing written).
		InsertIgnore(ctx context.Context, session sqlx.Session, eventID string, activityID, delta int64) (bool, error)
		// FindEventIdsByActivity returns the event ids of an activity's applied adjustments
		// inside session.
		FindEventIdsByActivity(ctx context.Context, session sqlx.Session, activityID int64) ([]string, error)
		// FindHistory returns an activity's applied adjustments, newest first, each with the
		// activity's total after it.
		FindHistory(ctx context.Context, activityID int64) ([]*AdjustmentHistory, error)
	}

	// AdjustmentHistory is one applied stock adjustment: Total is the activity's total right
	// after it, CreatedAt when the writer applied it (unix seconds).
	AdjustmentHistory struct {
		Delta     int64 `db:"delta"`
		Total     int64 `db:"total"`
		CreatedAt int64 `db:"created_at"`
	}

	customStockAdjustmentModel struct {
		*defaultStockAdjustmentModel
	}
)

// NewStockAdjustmentModel returns a model for the database table.
func NewStockAdjustmentModel(conn sqlx.SqlConn) StockAdjustmentModel {
	return &customStockAdjustmentModel{
		defaultStockAdjustmentModel: newStockAdjustmentModel(conn),
	}
}

func (m *customStockAdjustmentModel) withSession(session sqlx.Session) StockAdjustmentModel {
	return NewStockAdjustmentModel(sqlx.NewSqlConnFromSession(session))
}

func (m *customStockAdjustmentModel) FindEventIdsByActivity(ctx context.Context, session sqlx.Session,
	activityID int64) ([]string, error) {
	query := fmt.Sprintf("select `event_id` from %s where `activity_id` = ?", m.table)
	var resp []string
	if err := session.QueryRowsCtx(ctx, &resp, query, activityID); err != nil {
		return nil, err
	}
	return resp, nil
}

func (m *customStockAdjustmentModel) InsertIgnore(ctx context.Context, session sqlx.Session, eventID string,
	activityID, delta int64) (bool, error) {
	query := fmt.Sprintf("INSERT IGNORE INTO %s (`event_id`, `activity_id`, `delta`) VALUES (?, ?, ?)", m.table)
	result, err := session.ExecCtx(ctx, query, eventID, activityID, delta)
	if err != nil {
		return false, err
	}
	n, err := result.RowsAffected()
	if err != nil {
		return false, err
	}
	return n > 0, nil
}

// FindHistory reads the adjustments and the activity's total in one statement (one snapshot):
// the writer changes activity.total in the transaction that records an adjustment, so the
// total after adjustment i is today's total less the deltas recorded after i.
func (m *customStockAdjustmentModel) FindHistory(ctx context.Context, activityID int64) ([]*AdjustmentHistory,
	error) {
	query := fmt.Sprintf("SELECT s.`delta`, CAST(a.`total` - (SUM(s.`delta`) OVER (ORDER BY s.`id` DESC "+
		"ROWS UNBOUNDED PRECEDING) - s.`delta`) AS SIGNED) AS `total`, "+
		"CAST(UNIX_TIMESTAMP(s.`create_time`) AS SIGNED) AS `created_at` "+
		"FROM %s s JOIN `activity` a ON a.`id` = s.`activity_id` WHERE s.`activity_id` = ? ORDER BY s.`id` DESC",
		m.table)
	var resp []*AdjustmentHistory
	if err := m.conn.QueryRowsCtx(ctx, &resp, query, activityID); err != nil {
		return nil, err
	}
	return resp, nil
}
