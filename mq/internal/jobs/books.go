package jobs

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/seckill/seckill/rpc/inventoryclient"
)

// Books exports both books of every active activity as gauges (seckill_stock_redis_units,
// seckill_stock_mysql_units), more often than reconciliation runs: the numbers a live sale
// is watched by. It only reads (the Books RPC: Redis without backfill, MySQL's inventory
// row), and deletes the series of activities that dropped out of ListActive.
type Books struct {
	inv inventoryclient.Inventory
}

// NewBooks returns the books job.
func NewBooks(inv inventoryclient.Inventory) *Books { return &Books{inv: inv} }

// Tick reads both books of every active activity.
func (b *Books) Tick(ctx context.Context) error {
	act, err := b.inv.ListActive(ctx, &inventoryclient.ActiveReq{})
	if err != nil {
		return fmt.Errorf("list active: %w", err)
	}
	retireExcept(act.ActivityIds)
	var errs []error
	for _, aid := range act.ActivityIds {
		resp, err := b.inv.Books(ctx, &inventoryclient.ReconcileReq{ActivityId: aid})
		if err != nil {
			errs = append(errs, fmt.Errorf("activity %d: %w", aid, err))
			continue
		}
		label := strconv.FormatInt(aid, 10)
		track(label)
		setBooks(label, resp.Redis, resp.Db)
	}
	return errors.Join(errs...)
}

// setBooks sets the book gauges of one activity; the Redis book's series are removed
// while it is not warm.
func setBooks(label string, rds *inventoryclient.Stock, db *inventoryclient.DbStock) {
	if rds == nil {
		metricRedisBook.DeletePartialMatch(map[string]string{"activity": label})
	} else {
		metricRedisBook.WithLabelValues(label, "remaining").Set(float64(rds.Remaining))
		metricRedisBook.WithLabelValues(label, "locked").Set(float64(rds.Locked))
		metricRedisBook.WithLabelValues(label, "sold").Set(float64(rds.Sold))
	}
	if db != nil {
		metricMySQLBook.WithLabelValues(label, "available").Set(float64(db.Available))
		metricMySQLBook.WithLabelValues(label, "locked").Set(float64(db.Locked))
		metricMySQLBook.WithLabelValues(label, "sold").Set(float64(db.Sold))
	}
}
