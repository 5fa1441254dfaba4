package activity

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/zeromicro/go-zero/core/bloom"
	"github.com/zeromicro/go-zero/core/logc"
	"github.com/zeromicro/go-zero/core/stores/redis"
)

var bloomRejected = promauto.NewCounter(prometheus.CounterOpts{
	Namespace: "seckill",
	Subsystem: "rpc",
	Name:      "bloom_rejected_total",
	Help:      "activity ids answered ACTIVITY_NOT_FOUND by the Bloom filter, without a MySQL read",
})

// seededMark is a member every seeded filter holds (never a decimal id): a filter without
// it (never seeded, or lost with Redis's data) is not trusted.
var seededMark = []byte("seeded")

// BloomKey is Known's Bloom filter under the deployment's key prefix (a string of bits).
func BloomKey(prefix string) string { return prefix + "sk:bloom:activities" }

// Known is the Bloom filter of every activity id MySQL has (go-zero core/bloom on Redis): a lookup
// of an id that cannot exist never reaches MySQL (docs/DESIGN.md, "Warm-up, cache backfill ...").
type Known struct {
	filter  *bloom.Filter
	page    Page
	refresh time.Duration

	mu     sync.Mutex
	max    int64     // highest id seen
	last   time.Time // last read of new ids
	failed bool      // that read failed: an id above max cannot be ruled out
}

// Page lists up to limit activity ids greater than after, in order
// (model.ActivityModel.FindActivityIdsAfter).
type Page func(ctx context.Context, after int64, limit int) ([]int64, error)

// NewKnown is the filter at key (BloomKey) of bits bits, reading MySQL
// through page at most once per refresh.
func NewKnown(rds *redis.Redis, key string, bits uint, page Page, refresh time.Duration) *Known {
	return &Known{filter: bloom.New(rds, key, bits), page: page, refresh: refresh}
}

// Add records an id (after its row is committed).
func (k *Known) Add(ctx context.Context, id int64) error {
	if err := k.filter.AddCtx(ctx, []byte(strconv.FormatInt(id, 10))); err != nil {
		return err
	}
	k.mu.Lock()
	k.max = max(k.max, id)
	k.mu.Unlock()
	return nil
}

// Seed adds every id MySQL has, then marks the filter seeded.
func (k *Known) Seed(ctx context.Context) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n, err := k.addAfter(ctx, 0)
	if err != nil {
		return n, err
	}
	return n, k.filter.AddCtx(ctx, seededMark)
}

// addAfter adds the ids above after, page by page; k.mu is held.
func (k *Known) addAfter(ctx context.Context, after int64) (n int, err error) {
	const size = 5000
	defer func() { k.last, k.failed = time.Now(), err != nil }()
	for {
		ids, err := k.page(ctx, after, size)
		if err != nil {
			return n, err
		}
		for _, id := range ids {
			if err := k.filter.AddCtx(ctx, []byte(strconv.FormatInt(id, 10))); err != nil {
				return n, err
			}
			after = id
			k.max = max(k.max, id)
		}
		n += len(ids)
		if len(ids) < size {
			return n, nil
		}
	}
}

// catchUp reads the ids added since the highest one seen, unless another caller did
// after this one started waiting; at most once per refresh. It is false when that read
// failed (MySQL or Redis unreachable, the caller's context ended): nothing is known then.
func (k *Known) catchUp(ctx context.Context) bool {
	asked := time.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.last.After(asked) {
		return !k.failed // refreshed while this caller waited
	}
	if wait := k.refresh - time.Since(k.last); wait > 0 {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
	}
	if _, err := k.addAfter(ctx, k.max); err != nil {
		logc.Errorf(ctx, "activity bloom filter: reading new activity ids: %v", err)
		return false
	}
	return true
}

func (k *Known) highest() int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.max
}

// MayExist is false only when the seeded filter does not hold id.
func (k *Known) MayExist(ctx context.Context, id int64) bool {
	seeded, err := k.filter.ExistsCtx(ctx, seededMark)
	if err != nil || !seeded {
		if err != nil {
			logc.Errorf(ctx, "activity bloom filter unavailable, reading MySQL: %v", err)
		}
		return true
	}
	ok, err := k.filter.ExistsCtx(ctx, []byte(strconv.FormatInt(id, 10)))
	if err != nil {
		logc.Errorf(ctx, "activity bloom filter unavailable, reading MySQL: %v", err)
		return true
	}
	if !ok && id > k.highest() {
		// Perhaps written since (or its Add failed): catch up (bounded), then look again.
		// A catch-up that failed rules nothing out: the caller reads MySQL, which answers
		// (or is BUSY), never a 404 for an activity that exists.
		if !k.catchUp(ctx) {
			return true
		}
		if id <= k.highest() {
			ok, err = k.filter.ExistsCtx(ctx, []byte(strconv.FormatInt(id, 10)))
			ok = ok || err != nil
		}
	}
	if !ok {
		bloomRejected.Inc()
	}
	return ok
}

// KnownSource consults the filter before its Source: an id the filter rules out is
// ErrNotFound without a read.
type KnownSource struct {
	Source
	Known *Known
}

// Load implements Source.
func (s KnownSource) Load(ctx context.Context, id int64) (*Record, error) {
	if !s.Known.MayExist(ctx, id) {
		return nil, ErrNotFound
	}
	return s.Source.Load(ctx, id)
}
