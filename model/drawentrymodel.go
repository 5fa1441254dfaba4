package model

import (
	"context"
	"fmt"

	"github.com/zeromicro/go-zero/core/stores/sqlx"
)

var _ DrawEntryModel = (*customDrawEntryModel)(nil)

type (
	// DrawEntryModel is an interface to be customized, add more methods here,
	// and implement the added methods in customDrawEntryModel.
	DrawEntryModel interface {
		drawEntryModel
		withSession(session sqlx.Session) DrawEntryModel
		// InsertIgnore records a buyer's entry once inside session: false when the buyer's
		// entry in the activity was recorded before (nothing written).
		InsertIgnore(ctx context.Context, session sqlx.Session, e *DrawEntry) (bool, error)
		// FindByActivity lists an activity's entries by uid.
		FindByActivity(ctx context.Context, activityID int64) ([]*DrawEntry, error)
	}

	customDrawEntryModel struct {
		*defaultDrawEntryModel
	}
)

// NewDrawEntryModel returns a model for the database table.
func NewDrawEntryModel(conn sqlx.SqlConn) DrawEntryModel {
	return &customDrawEntryModel{
		defaultDrawEntryModel: newDrawEntryModel(conn),
	}
}

func (m *customDrawEntryModel) withSession(session sqlx.Session) DrawEntryModel {
	return NewDrawEntryModel(sqlx.NewSqlConnFromSession(session))
}

func (m *customDrawEntryModel) InsertIgnore(ctx context.Context, session sqlx.Session, e *DrawEntry) (bool, error) {
	query := fmt.Sprintf("INSERT IGNORE INTO %s (%s) VALUES (?, ?, ?, ?, ?, ?)", m.table, drawEntryRowsExpectAutoSet)
	result, err := session.ExecCtx(ctx, query, e.ActivityId, e.Uid, e.Quantity, e.RequestId, e.EventId, e.EnteredAt)
	if err != nil {
		return false, err
	}
	n, err := result.RowsAffected()
	return n == 1, err
}

func (m *customDrawEntryModel) FindByActivity(ctx context.Context, activityID int64) ([]*DrawEntry, error) {
	var rows []*DrawEntry
	err := m.conn.QueryRowsCtx(ctx, &rows, "SELECT "+drawEntryRows+" FROM "+m.table+
		" WHERE `activity_id` = ? ORDER BY `uid`", activityID)
	return rows, err
}
