package book

import (
	"context"
	"errors"
	"fmt"

	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/activity"
)

// errDrawNeedsRedis answers a reservation in degrade mode while the activity's opening draw
// is not decided: entries and the draw live in Redis (docs/DESIGN.md, "The opening draw").
var errDrawNeedsRedis = xerr.New(xerr.Busy, "the opening draw needs the Redis book, retry with the same request_id")

// drawGuard refuses, on the MySQL book, a reservation of an activity whose draw is not done.
func (r *Router) drawGuard(ctx context.Context, aid int64) error {
	a, err := r.MySQL.Activities.FindOne(ctx, uint64(aid))
	if errors.Is(err, model.ErrNotFound) {
		return nil // the MySQL book answers it
	}
	if err != nil {
		return activity.DBError(fmt.Errorf("read activity %d: %w", aid, err))
	}
	if a.DrawSeconds > 0 && a.DrawDoneAt == 0 {
		return errDrawNeedsRedis
	}
	return nil
}
