// Package stock is the Redis half of the inventory: key names, the Lua scripts that change
// stock in one atomic step, and their typed results. Store holds the order lifecycle;
// Recovery and Outbox hang off it (docs/DESIGN.md, "Redis keys" and "Lua scripts").
package stock

import (
	"context"

	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
)

// Bounds for values coming from callers.
const (
	MaxExpireBatch = 1000
	// MaxReserveBatch bounds the items of one ReserveBatch.
	MaxReserveBatch = 512
	orderNoAttempts = 3
	// restoreBatch is how many orders, holdings, entries or losers one restore script call writes.
	restoreBatch = 500
	// maxKeyLife bounds how far out a key may be set to expire (the scripts check the
	// same 20 years): twice domain.MaxHorizon, so a 10-year activity plus its pay timeout
	// and grace fits and a nanosecond end does not.
	maxKeyLife = 2 * domain.MaxHorizon
)

// Store runs the inventory scripts against one Redis (node or cluster).
type Store struct {
	rds  *redis.Redis
	keys Keys
	// orderKey tags order numbers (domain.NewOrderNo); nil: the unkeyed checksum.
	orderKey []byte
	// entries makes reserve.lua and enter.lua return the outbox entries they wrote (WithEntries).
	entries bool
	// drawEntriesPerAddr bounds a draw's entrants from one client address (0: none).
	drawEntriesPerAddr int
}

// NewStore returns a Store using keys under the given naming.
func NewStore(rds *redis.Redis, keys Keys, opts ...Option) *Store {
	s := &Store{rds: rds, keys: keys}
	for _, o := range opts {
		o(s)
	}
	return s
}

// An Option configures a Store at construction.
type Option func(*Store)

// WithEntries makes every reservation and draw entry carry the outbox entries its answer
// waits on (ReserveResult.entries, Awaited), for a caller that acknowledges them once Kafka has them
// (docs/DESIGN.md, "Acknowledged only once in Kafka"). Without it those scripts return only
// the entries' ids, which costs Redis less; the other changes always return their entries.
func WithEntries() Option { return func(s *Store) { s.entries = true } }

// WithDrawEntriesPerAddress bounds an opening draw's entrants per client address (0: none).
func WithDrawEntriesPerAddress(n int) Option { return func(s *Store) { s.drawEntriesPerAddr = n } }

// WithOrderKey sets the key that tags order numbers (config OrderKey). Without one, the tag is
// an unkeyed checksum.
func WithOrderKey(key []byte) Option { return func(s *Store) { s.orderKey = key } }

// now is Redis's clock in ms: the same clock the scripts use.
func (s *Store) now(ctx context.Context) (int64, error) {
	v, err := s.rds.EvalCtx(ctx, "local t = redis.call('TIME') return t[1] * 1000 + math.floor(t[2] / 1000)", nil)
	if err != nil {
		return 0, dep(err)
	}
	n, _ := v.(int64)
	return n, nil
}

func (s *Store) orderActivity(orderNo string, uid int64) (int64, error) {
	if uid < 1 {
		return 0, xerr.New(xerr.InvalidArgument, "uid must be >= 1 (the order's owner)")
	}
	return s.CheckOrderNo(orderNo)
}

// CheckOrderNo returns the activity of an order number this service could have issued:
// INVALID_ARGUMENT for a malformed one, ORDER_NOT_FOUND for one whose tag is wrong
// (forged, random, or from before tags), without reading anything.
func (s *Store) CheckOrderNo(orderNo string) (int64, error) {
	if _, ok := domain.ParseOrderNo(orderNo); !ok {
		return 0, xerr.New(xerr.InvalidArgument, "malformed order_no")
	}
	aid, ok := domain.VerifyOrderNo(orderNo, s.orderKey)
	if !ok {
		return 0, xerr.ErrOrderNotFound
	}
	return aid, nil
}

// NewOrderNo is a fresh order number for activity aid, tagged with this store's order key
// (degrade mode writes orders straight to MySQL with it, so the tag check passes).
func (s *Store) NewOrderNo(aid int64) string { return domain.NewOrderNo(aid, s.orderKey) }

// shortNo is a verified order number's name inside its activity's keys (domain.ShortOrderNo):
// the orders hash's field, a request id's value in the buyers hash, a word of a pending member.
func shortNo(orderNo string) string {
	short, _ := domain.ShortOrderNo(orderNo)
	return short
}

// orderNoOf is the order number of activity aid's order that its keys name short: the number
// domain.NewOrderNo made, tagged again with this store's order key.
func (s *Store) orderNoOf(aid int64, short string) string {
	return domain.OrderNoOf(aid, short, s.orderKey)
}
