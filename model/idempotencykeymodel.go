package model

import (
	"errors"

	"github.com/zeromicro/go-zero/core/stores/sqlx"
)

// errDupEntry is MySQL's duplicate key error (ER_DUP_ENTRY).
const errDupEntry = 1062

// ErrKeyTaken: a merchant's Idempotency-Key is recorded already (InsertWithInventoryKeyed wrote
// nothing); FindKey reads the activity it created.
var ErrKeyTaken = errors.New("model: the idempotency key is recorded already")

var _ IdempotencyKeyModel = (*customIdempotencyKeyModel)(nil)

type (
	// IdempotencyKeyModel is the idempotency_key table: a merchant's Idempotency-Key of a
	// creation, inserted in the activity's transaction (ActivityModel.InsertWithInventoryKeyed).
	IdempotencyKeyModel interface {
		idempotencyKeyModel
		withSession(session sqlx.Session) IdempotencyKeyModel
	}

	customIdempotencyKeyModel struct {
		*defaultIdempotencyKeyModel
	}
)

// NewIdempotencyKeyModel returns a model for the database table.
func NewIdempotencyKeyModel(conn sqlx.SqlConn) IdempotencyKeyModel {
	return &customIdempotencyKeyModel{
		defaultIdempotencyKeyModel: newIdempotencyKeyModel(conn),
	}
}

func (m *customIdempotencyKeyModel) withSession(session sqlx.Session) IdempotencyKeyModel {
	return NewIdempotencyKeyModel(sqlx.NewSqlConnFromSession(session))
}
