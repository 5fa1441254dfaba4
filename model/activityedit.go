package model

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"
	"github.com/zeromicro/go-zero/core/stores/sqlx"
)

// ErrStarted is returned by EditBeforeStart when the activity's start_time is not after the
// database's clock now: nothing was written.
var ErrStarted = errors.New("model: the activity has started")

// ActivityEdit is what an edit before the start replaces (docs/API.md, PUT
// /v1/admin/activities/{id}): everything create set but the total (changed through /stock) and
// the draw seed (fixed at creation, never changed).
type ActivityEdit struct {
	Id                uint64
	MerchantId        uint64
	SkuId             uint64
	Name              string
	StartTime         int64
	EndTime           int64
	PerUserLimit      uint64
	PayTimeoutSeconds uint64
	DrawSeconds       uint64
	Price             uint64
}

// editSet writes an edit; the start_time guard is the database's clock (the row is locked by
// EditBeforeStart's read, so it only confirms what that read saw). draw_seed is not a column
// it names: the generated Update would write and log it.
const editSet = " SET `sku_id` = ?, `name` = ?, `start_time` = ?, `end_time` = ?, " +
	"`per_user_limit` = ?, `pay_timeout_seconds` = ?, `draw_seconds` = ?, `price` = ? " +
	"WHERE `id` = ? AND `merchant_id` = ? AND `start_time` > UNIX_TIMESTAMP()"

// EditBeforeStart applies e to its activity in one transaction: it locks the row (SELECT ...
// FOR UPDATE), answers ErrNotFound for another merchant's or a missing activity and
// ErrStarted once the row's start_time is not after the database's clock, writes e, inserts
// key (its ActivityId set; nil: none; ErrKeyTaken when the merchant's key is recorded), and
// then runs apply with the activity as it was: an error from apply rolls the whole edit back
// (apply is the edit's Redis half, which decides "not started" by Redis's clock). The
// activity as it was is returned.
func (m *customActivityModel) EditBeforeStart(ctx context.Context, e ActivityEdit, key *IdempotencyKey,
	apply func(before *Activity) error) (*Activity, error) {
	var before Activity
	err := m.conn.TransactCtx(ctx, func(ctx context.Context, s sqlx.Session) error {
		q := "SELECT " + activityRows + " FROM " + m.table + " WHERE `id` = ? FOR UPDATE"
		if err := s.QueryRowCtx(ctx, &before, q, e.Id); err != nil {
			if errors.Is(err, sqlx.ErrNotFound) {
				return ErrNotFound
			}
			return fmt.Errorf("lock activity %d: %w", e.Id, err)
		}
		if before.MerchantId != e.MerchantId {
			return ErrNotFound
		}
		var started bool
		if err := s.QueryRowCtx(ctx, &started, "SELECT ? <= UNIX_TIMESTAMP()", before.StartTime); err != nil {
			return fmt.Errorf("read the clock: %w", err)
		}
		if started {
			return ErrStarted
		}
		if _, err := s.ExecCtx(ctx, "UPDATE "+m.table+editSet, e.SkuId, e.Name, e.StartTime, e.EndTime, e.PerUserLimit,
			e.PayTimeoutSeconds, e.DrawSeconds, e.Price, e.Id, e.MerchantId); err != nil {
			return fmt.Errorf("edit activity %d: %w", e.Id, err)
		}
		if key != nil {
			k := *key
			k.ActivityId = e.Id
			if _, err := NewIdempotencyKeyModel(sqlx.NewSqlConnFromSession(s)).Insert(ctx, &k); err != nil {
				if me := (*mysql.MySQLError)(nil); errors.As(err, &me) && me.Number == errDupEntry {
					return ErrKeyTaken
				}
				return fmt.Errorf("insert idempotency key of activity %d: %w", e.Id, err)
			}
		}
		return apply(&before)
	})
	if err != nil {
		return nil, err
	}
	return &before, nil
}
