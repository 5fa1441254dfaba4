package model

import "github.com/zeromicro/go-zero/core/stores/sqlx"

var _ StockAdjustmentModel = (*customStockAdjustmentModel)(nil)

type (
	// StockAdjustmentModel is an interface to be customized, add more methods here,
	// and implement the added methods in customStockAdjustmentModel.
	StockAdjustmentModel interface {
		stockAdjustmentModel
		withSession(session sqlx.Session) StockAdjustmentModel
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
