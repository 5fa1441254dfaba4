package model

import (
	"context"
	"crypto/rand"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"

	"github.com/zeromicro/go-zero/core/stores/sqlx"
)

var _ ActivityModel = (*customActivityModel)(nil)

// DrawSeedBytes is the length of an activity's draw seed (docs/DESIGN.md, "The opening draw").
const DrawSeedBytes = 32

type (
	// ActivityModel is an interface to be customized, add more methods here,
	// and implement the added methods in customActivityModel.
	ActivityModel interface {
		activityModel
		withSession(session sqlx.Session) ActivityModel
		// InsertWithInventory writes the activity and its inventory row (available =
		// data.Total, nothing locked or sold) in one transaction and returns the new id:
		// there is never an activity without its book. Every activity gets its draw seed here
		// (DrawSeedBytes from crypto/rand unless data.DrawSeed holds one), the only place a
		// seed is set, so an edit that adds a draw later finds one.
		InsertWithInventory(ctx context.Context, data *Activity) (int64, error)
		// InsertWithInventoryKeyed is InsertWithInventory that also inserts key (its ActivityId
		// set to the new id; nil: none) in the same transaction: ErrKeyTaken, nothing written,
		// when the merchant's key is recorded already.
		InsertWithInventoryKeyed(ctx context.Context, data *Activity, key *IdempotencyKey) (int64, error)
		// FindKey reads a merchant's recorded Idempotency-Key of a creation (ErrNotFound: none).
		FindKey(ctx context.Context, merchantID uint64, key string) (*IdempotencyKey, error)
		// FindOneWithInventory reads the activity and its inventory row in one query.
		// ErrNotFound when either is absent.
		FindOneWithInventory(ctx context.Context, id uint64) (*ActivityWithInventory, error)
		// AddActivityTotal changes the activity's total by delta inside session (it follows
		// stock adjustments, so available+locked+sold == total holds).
		AddActivityTotal(ctx context.Context, session sqlx.Session, activityID, delta int64) error
		// FindActivityIdsStartingBy lists the activities not ended at now that start by
		// startBy (unix seconds), by start time: the inventory to load into Redis.
		FindActivityIdsStartingBy(ctx context.Context, now, startBy int64) ([]int64, error)
		// FindByMerchant lists one merchant's activities, newest first (limit rows from
		// offset), and how many it has in all (idx_merchant).
		FindByMerchant(ctx context.Context, merchantID uint64, offset, limit int64) ([]*Activity, int64, error)
		// FindActivityIdsAfter lists up to limit activity ids greater than after, in
		// order: every id, page by page (the Bloom filter of known activities is seeded so).
		FindActivityIdsAfter(ctx context.Context, after int64, limit int) ([]int64, error)
		// FindDrawSeed reads the activity's draw seed (DrawSeedBytes random bytes fixed by
		// InsertWithInventory, never changed; empty for a draw done before the seed was kept).
		// ErrNotFound: no such activity.
		FindDrawSeed(ctx context.Context, id int64) ([]byte, error)
		// FindPrice reads the activity's unit price and start (unix seconds).
		FindPrice(ctx context.Context, id int64) (price, start int64, err error)
		// FixDrawStock records the stock the draw serves (what remains when it begins) unless
		// one is recorded already, and returns the recorded one: the audit's stock.
		FixDrawStock(ctx context.Context, id, stock int64) (int64, error)
		// SetDrawDone records when the activity's draw finished (unix ms), once.
		SetDrawDone(ctx context.Context, id, atMs int64) error
		// SetDrawCursor records how many entrants of the draw's order are decided; it only
		// grows (a stale drawer's lower cursor changes nothing).
		SetDrawCursor(ctx context.Context, id, cursor int64) error
		// FindDrawCursor reads it (ErrNotFound: no such activity).
		FindDrawCursor(ctx context.Context, id int64) (int64, error)
		// EndAt moves the activity's end_time to now (unix seconds) if it started by now and
		// has not ended: false when nothing changed (not started, or ended already).
		EndAt(ctx context.Context, id, now int64) (bool, error)
		// EditBeforeStart replaces what create set, before the start only (activityedit.go).
		EditBeforeStart(ctx context.Context, e ActivityEdit, key *IdempotencyKey,
			apply func(before *Activity) error) (*Activity, error)
	}

	customActivityModel struct {
		*defaultActivityModel
	}

	// ActivityWithInventory is an activity and its MySQL counters (CreateTime and
	// UpdateTime are not read).
	ActivityWithInventory struct {
		Activity
		Available uint64 `db:"available"`
		Locked    uint64 `db:"locked"`
		Sold      uint64 `db:"sold"`
		Epoch     uint64 `db:"epoch"`
	}
)

// NewActivityModel returns a model for the database table.
func NewActivityModel(conn sqlx.SqlConn) ActivityModel {
	return &customActivityModel{
		defaultActivityModel: newActivityModel(conn),
	}
}

func (m *customActivityModel) withSession(session sqlx.Session) ActivityModel {
	return NewActivityModel(sqlx.NewSqlConnFromSession(session))
}

func (m *customActivityModel) InsertWithInventory(ctx context.Context, data *Activity) (int64, error) {
	return m.InsertWithInventoryKeyed(ctx, data, nil)
}

func (m *customActivityModel) FindKey(ctx context.Context, merchantID uint64, key string) (*IdempotencyKey, error) {
	return NewIdempotencyKeyModel(m.conn).FindOneByMerchantIdIdemKey(ctx, merchantID, key)
}

func (m *customActivityModel) InsertWithInventoryKeyed(ctx context.Context, data *Activity,
	key *IdempotencyKey) (int64, error) {
	seed := []byte(data.DrawSeed)
	if len(seed) == 0 {
		seed = make([]byte, DrawSeedBytes)
		if _, err := rand.Read(seed); err != nil {
			return 0, fmt.Errorf("draw seed: %w", err)
		}
	}
	row := *data
	row.DrawSeed = "" // the generated Insert would log it (go-zero's sqlx logs every statement with its arguments)
	var id int64
	err := m.conn.TransactCtx(ctx, func(ctx context.Context, s sqlx.Session) error {
		res, err := m.withSession(s).Insert(ctx, &row)
		if err != nil {
			return fmt.Errorf("insert activity: %w", err)
		}
		if id, err = res.LastInsertId(); err != nil {
			return fmt.Errorf("insert activity: %w", err)
		}
		if _, err := s.ExecCtx(ctx, "UPDATE "+m.table+" SET `draw_seed` = ? WHERE `id` = ?", secret(seed),
			id); err != nil {
			return fmt.Errorf("draw seed of activity %d: %w", id, err)
		}
		inv := NewInventoryModel(sqlx.NewSqlConnFromSession(s))
		if _, err := inv.Insert(ctx, &Inventory{ActivityId: uint64(id), Available: data.Total, Mode: ModeRedis}); err != nil {
			return fmt.Errorf("insert inventory of activity %d: %w", id, err)
		}
		if key == nil {
			return nil
		}
		k := *key
		k.ActivityId = uint64(id)
		if _, err := NewIdempotencyKeyModel(sqlx.NewSqlConnFromSession(s)).Insert(ctx, &k); err != nil {
			if me := (*mysql.MySQLError)(nil); errors.As(err, &me) && me.Number == errDupEntry {
				return ErrKeyTaken
			}
			return fmt.Errorf("insert idempotency key of activity %d: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	data.DrawSeed = string(seed)
	return id, nil
}

// secret is a statement argument go-zero's sqlx logs as a placeholder (its log writes an
// argument's String), not its bytes: the draw seed is shown only once the draw is done.
type secret []byte

func (secret) String() string { return "'<draw seed>'" }

// Value is what the driver sends.
func (s secret) Value() (driver.Value, error) { return []byte(s), nil }

func (m *customActivityModel) FindOneWithInventory(ctx context.Context, id uint64) (*ActivityWithInventory, error) {
	query := fmt.Sprintf("select a.`id`, a.`sku_id`, a.`name`, a.`total`, a.`start_time`, a.`end_time`, "+
		"a.`per_user_limit`, a.`pay_timeout_seconds`, a.`price`, a.`merchant_id`, a.`draw_seconds`, a.`draw_seed`, "+
		"a.`draw_done_at`, i.`available`, i.`locked`, i.`sold`, i.`epoch` "+
		"from %s a join `inventory` i on i.`activity_id` = a.`id` where a.`id` = ? limit 1", m.table)
	var resp ActivityWithInventory
	err := m.conn.QueryRowPartialCtx(ctx, &resp, query, id)
	switch err {
	case nil:
		return &resp, nil
	case sqlx.ErrNotFound:
		return nil, ErrNotFound
	default:
		return nil, err
	}
}

func (m *customActivityModel) AddActivityTotal(ctx context.Context, session sqlx.Session, activityID,
	delta int64) error {
	plus, minus := max(delta, 0), max(-delta, 0)
	_, err := session.ExecCtx(ctx, "UPDATE "+m.table+" SET `total` = `total` + ? - ? WHERE `id` = ?",
		plus, minus, activityID)
	return err
}

func (m *customActivityModel) FindActivityIdsStartingBy(ctx context.Context, now, startBy int64) ([]int64, error) {
	var ids []int64
	// idx_end_time narrows to live and future activities.
	err := m.conn.QueryRowsCtx(ctx, &ids, "SELECT `id` FROM "+m.table+" WHERE `end_time` > ? AND `start_time` <= ? "+
		"ORDER BY `start_time`", now, startBy)
	return ids, err
}

func (m *customActivityModel) FindByMerchant(
	ctx context.Context, merchantID uint64, offset, limit int64,
) ([]*Activity, int64, error) {
	var total int64
	if err := m.conn.QueryRowCtx(ctx, &total, "SELECT COUNT(*) FROM "+m.table+" WHERE `merchant_id` = ?",
		merchantID); err != nil {
		return nil, 0, err
	}
	var rows []*Activity
	if total > offset {
		if err := m.conn.QueryRowsCtx(ctx, &rows, "SELECT "+activityRows+" FROM "+m.table+
			" WHERE `merchant_id` = ? ORDER BY `id` DESC LIMIT ? OFFSET ?", merchantID, limit, offset); err != nil {
			return nil, 0, err
		}
	}
	return rows, total, nil
}

func (m *customActivityModel) FindActivityIdsAfter(ctx context.Context, after int64, limit int) ([]int64, error) {
	var ids []int64
	err := m.conn.QueryRowsCtx(ctx, &ids,
		"SELECT `id` FROM "+m.table+" WHERE `id` > ? ORDER BY `id` LIMIT ?", after, limit)
	return ids, err
}

func (m *customActivityModel) FindDrawSeed(ctx context.Context, id int64) ([]byte, error) {
	var got string // go-zero's sqlx scans no []byte
	err := m.conn.QueryRowCtx(ctx, &got, "SELECT `draw_seed` FROM "+m.table+" WHERE `id` = ?", id)
	if err == sqlx.ErrNotFound {
		return nil, ErrNotFound
	}
	return []byte(got), err
}

func (m *customActivityModel) FindPrice(ctx context.Context, id int64) (price, start int64, err error) {
	var row struct {
		Price int64 `db:"price"`
		Start int64 `db:"start_time"`
	}
	err = m.conn.QueryRowCtx(ctx, &row, "SELECT `price`, `start_time` FROM "+m.table+" WHERE `id` = ?", id)
	if err == sqlx.ErrNotFound {
		return 0, 0, ErrNotFound
	}
	return row.Price, row.Start, err
}

func (m *customActivityModel) FixDrawStock(ctx context.Context, id, stock int64) (int64, error) {
	if _, err := m.conn.ExecCtx(ctx, "UPDATE "+m.table+
		" SET `draw_stock` = ? WHERE `id` = ? AND `draw_stock` IS NULL", stock, id); err != nil {
		return 0, err
	}
	var got int64 // set by now
	err := m.conn.QueryRowCtx(ctx, &got, "SELECT `draw_stock` FROM "+m.table+" WHERE `id` = ?", id)
	if err == sqlx.ErrNotFound {
		return 0, ErrNotFound
	}
	return got, err
}

func (m *customActivityModel) SetDrawDone(ctx context.Context, id, atMs int64) error {
	_, err := m.conn.ExecCtx(ctx, "UPDATE "+m.table+" SET `draw_done_at` = ? WHERE `id` = ? AND `draw_done_at` = 0",
		atMs, id)
	return err
}

func (m *customActivityModel) SetDrawCursor(ctx context.Context, id, cursor int64) error {
	_, err := m.conn.ExecCtx(ctx, "UPDATE "+m.table+" SET `draw_cursor` = ? WHERE `id` = ? AND `draw_cursor` < ?",
		cursor, id, cursor)
	return err
}

func (m *customActivityModel) FindDrawCursor(ctx context.Context, id int64) (int64, error) {
	var got int64
	err := m.conn.QueryRowCtx(ctx, &got, "SELECT `draw_cursor` FROM "+m.table+" WHERE `id` = ?", id)
	if err == sqlx.ErrNotFound {
		return 0, ErrNotFound
	}
	return got, err
}

func (m *customActivityModel) EndAt(ctx context.Context, id, now int64) (bool, error) {
	res, err := m.conn.ExecCtx(ctx, "UPDATE "+m.table+" SET `end_time` = ? WHERE `id` = ? AND `start_time` <= ? "+
		"AND `end_time` > ?", now, id, now, now)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
