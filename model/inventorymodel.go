package model

import (
	"context"
	"fmt"

	"github.com/zeromicro/go-zero/core/stores/sqlx"
)

var _ InventoryModel = (*customInventoryModel)(nil)

type (
	// InventoryModel is an interface to be customized, add more methods here,
	// and implement the added methods in customInventoryModel.
	InventoryModel interface {
		inventoryModel
		withSession(session sqlx.Session) InventoryModel
		// ApplyDelta changes activityID's inventory by d inside session, adding before it
		// subtracts; ErrNotFound when the activity has no inventory row.
		ApplyDelta(ctx context.Context, session sqlx.Session, activityID int64, d InventoryDelta) error
		// FindCounters returns an activity's inventory counters with the activity's total inside
		// session (ErrNotFound without an inventory row).
		FindCounters(ctx context.Context, session sqlx.Session, activityID int64) (*InventoryCounters, error)
		// BumpEpoch moves the activity's epoch from `from` to from+1 (a warm-up or rebuild
		// into Redis); false when it was not `from` (another rebuild moved it: nothing
		// changed); ErrNotFound without an inventory row.
		BumpEpoch(ctx context.Context, activityID, from int64) (bool, error)
		// FindEpochsForUpdate reads the epoch of each of activityIDs that has an inventory
		// row, locking those rows (in activity_id order) until session's transaction ends:
		// the writer's fence against changes of a replaced Redis book.
		FindEpochsForUpdate(ctx context.Context, session sqlx.Session, activityIDs []int64) (map[int64]int64, error)
		// FindMode reads the activity's mode (the book that sells: ModeRedis, ModeMySQL,
		// ModeRebuilding); ErrNotFound without an inventory row.
		FindMode(ctx context.Context, activityID int64) (string, error)
		// SwitchMode moves the activity's mode from `from` to `to`; false when it was not
		// `from` (another instance switched first, nothing changed).
		SwitchMode(ctx context.Context, activityID int64, from, to string) (bool, error)
		// LockMode reads the activity's mode and locks its inventory row until session's
		// transaction ends: every degrade-mode transaction of the activity starts with it.
		LockMode(ctx context.Context, session sqlx.Session, activityID int64) (string, error)
		// TakeAvailable moves qty from available to locked while the activity is in mode
		// mysql and has qty available, inside session; false when it has not.
		TakeAvailable(ctx context.Context, session sqlx.Session, activityID, qty int64) (bool, error)
	}

	customInventoryModel struct {
		*defaultInventoryModel
	}
)

// NewInventoryModel returns a model for the database table.
func NewInventoryModel(conn sqlx.SqlConn) InventoryModel {
	return &customInventoryModel{
		defaultInventoryModel: newInventoryModel(conn),
	}
}

func (m *customInventoryModel) withSession(session sqlx.Session) InventoryModel {
	return NewInventoryModel(sqlx.NewSqlConnFromSession(session))
}

// InventoryCounters is an activity's inventory row joined with the activity's total.
type InventoryCounters struct {
	Total     uint64 `db:"total"`
	Available uint64 `db:"available"`
	Locked    uint64 `db:"locked"`
	Sold      uint64 `db:"sold"`
}

func (m *customInventoryModel) FindCounters(ctx context.Context, session sqlx.Session,
	activityID int64) (*InventoryCounters, error) {
	query := fmt.Sprintf("select a.`total`, i.`available`, i.`locked`, i.`sold` from %s i "+
		"join `activity` a on a.`id` = i.`activity_id` where i.`activity_id` = ?", m.table)
	var resp InventoryCounters
	switch err := session.QueryRowCtx(ctx, &resp, query, activityID); err {
	case nil:
		return &resp, nil
	case sqlx.ErrNotFound:
		return nil, ErrNotFound
	default:
		return nil, err
	}
}

func (m *customInventoryModel) BumpEpoch(ctx context.Context, activityID, from int64) (bool, error) {
	query := fmt.Sprintf("UPDATE %s SET `epoch` = ? WHERE `activity_id` = ? AND `epoch` = ?", m.table)
	result, err := m.conn.ExecCtx(ctx, query, from+1, activityID, from)
	if err != nil {
		return false, err
	}
	if n, err := result.RowsAffected(); err != nil {
		return false, err
	} else if n == 1 {
		return true, nil
	}
	var exists int
	err = m.conn.QueryRowCtx(ctx, &exists,
		fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE `activity_id` = ?", m.table), activityID)
	if err != nil {
		return false, err
	}
	if exists == 0 {
		return false, ErrNotFound
	}
	return false, nil
}

// The activity modes (inventory.mode): the book that sells the activity.
const (
	ModeRedis      = "redis"
	ModeMySQL      = "mysql"
	ModeRebuilding = "rebuilding"
)

func (m *customInventoryModel) FindMode(ctx context.Context, activityID int64) (string, error) {
	query := fmt.Sprintf("SELECT `mode` FROM %s WHERE `activity_id` = ?", m.table)
	var mode string
	switch err := m.conn.QueryRowCtx(ctx, &mode, query, activityID); err {
	case nil:
		return mode, nil
	case sqlx.ErrNotFound:
		return "", ErrNotFound
	default:
		return "", err
	}
}

func (m *customInventoryModel) SwitchMode(ctx context.Context, activityID int64, from, to string) (bool, error) {
	query := fmt.Sprintf("UPDATE %s SET `mode` = ? WHERE `activity_id` = ? AND `mode` = ?", m.table)
	res, err := m.conn.ExecCtx(ctx, query, to, activityID, from)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (m *customInventoryModel) LockMode(ctx context.Context, session sqlx.Session, activityID int64) (string, error) {
	query := fmt.Sprintf("SELECT `mode` FROM %s WHERE `activity_id` = ? FOR UPDATE", m.table)
	var mode string
	switch err := session.QueryRowCtx(ctx, &mode, query, activityID); err {
	case nil:
		return mode, nil
	case sqlx.ErrNotFound:
		return "", ErrNotFound
	default:
		return "", err
	}
}

func (m *customInventoryModel) TakeAvailable(
	ctx context.Context, session sqlx.Session, activityID, qty int64,
) (bool, error) {
	query := fmt.Sprintf("UPDATE %s SET `available` = `available` - ?, `locked` = `locked` + ? "+
		"WHERE `activity_id` = ? AND `available` >= ? AND `mode` = 'mysql'", m.table)
	res, err := session.ExecCtx(ctx, query, qty, qty, activityID, qty)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
