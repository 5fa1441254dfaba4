package activity

import (
	"context"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/zeromicro/go-zero/core/collection"

	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/draw"
)

// SeedSource reads an activity's draw seed (model.ActivityModel).
type SeedSource interface {
	FindDrawSeed(ctx context.Context, id int64) ([]byte, error)
}

// Seeds keeps the draw seeds of the activities buyers view, read from MySQL once per activity
// and process: a seed never changes once the activity is created. It holds them in memory
// only; nothing shows one before its draw is done (PublicDraw).
type Seeds struct {
	src   SeedSource
	cache *collection.Cache
}

// seedsKept bounds the seeds held: activities with a draw live at the same time.
const seedsKept = 10_000

// NewSeeds reads seeds from src.
func NewSeeds(src SeedSource) *Seeds {
	c, err := collection.NewCache(time.Hour, collection.WithLimit(seedsKept), collection.WithName("draw-seeds"))
	if err != nil {
		panic(err) // only for a non-positive interval or slot count: not these constants
	}
	return &Seeds{src: src, cache: c}
}

// Seed is activity aid's draw seed (empty: it has none).
func (s *Seeds) Seed(ctx context.Context, aid int64) ([]byte, error) {
	v, err := s.cache.Take(strconv.FormatInt(aid, 10), func() (any, error) {
		seed, err := s.src.FindDrawSeed(ctx, aid)
		if err != nil {
			return nil, DBError(err)
		}
		return seed, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

// PublicDraw is what a view shows of a draw's seed: its commitment always, the seed itself
// (lowercase hex) only once the draw is done.
func PublicDraw(seed []byte, done bool) (commitment, shown string) {
	if done {
		shown = hex.EncodeToString(seed)
	}
	return draw.Commitment(seed), shown
}

// PublicDrawOf is PublicDraw for an activity row (done: its draw_done_at is set).
func PublicDrawOf(a *model.Activity) (commitment, shown string) {
	return PublicDraw([]byte(a.DrawSeed), a.DrawDoneAt > 0)
}
