package stock

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Keys builds every Redis key name; nothing else in the code base spells one. Each
// activity's keys share the hash tag {a<ID>}, so a script touches one cluster slot.
// Prefix isolates deployments (and tests) sharing one Redis.
type Keys struct {
	Prefix string
}

func (k Keys) base(aid int64) string {
	return k.Prefix + "sk:{a" + strconv.FormatInt(aid, 10) + "}:"
}

// Stock is the hash `total remaining locked sold start end limit ttl sku name exp`.
func (k Keys) Stock(aid int64) string { return k.base(aid) + "stock" }

// Req maps a user's request id to its order_no (idempotency). It is scoped by user as
// well as activity, so one buyer's request id can never return another buyer's order.
func (k Keys) Req(aid, uid int64, requestID string) string {
	return k.base(aid) + "req:" + strconv.FormatInt(uid, 10) + ":" + requestID
}

// Order is the hash `uid qty state expire_at request_id created_at`.
func (k Keys) Order(aid int64, orderNo string) string { return k.base(aid) + "order:" + orderNo }

// User holds the quantity a user holds in the activity (reserved + paid).
func (k Keys) User(aid, uid int64) string {
	return k.base(aid) + "user:" + strconv.FormatInt(uid, 10)
}

// Pending is the zset of reserved order_nos scored by expire_at (ms).
func (k Keys) Pending(aid int64) string { return k.base(aid) + "pending" }

// Orders is the zset of every order_no scored by creation (ms).
func (k Keys) Orders(aid int64) string { return k.base(aid) + "orders" }

// Events is the activity's outbox stream.
func (k Keys) Events(aid int64) string { return k.base(aid) + "events" }

// Missing caches "no such activity".
func (k Keys) Missing(aid int64) string { return k.base(aid) + "missing" }

// Lock guards the cache backfill of one activity.
func (k Keys) Lock(aid int64) string { return k.base(aid) + "lock" }

// Recon is the hash of differences reconciliation found unexplained on its last run
// (fingerprint -> first seen), so that consecutive runs, from any instance, can tell a
// lingering difference from one still in flight.
func (k Keys) Recon(aid int64) string { return k.base(aid) + "recon" }

// Active is the zset of warm activity ids scored by end time (unix seconds).
func (k Keys) Active() string { return k.Prefix + "sk:active" }

// orderNoPattern: "<activity id>-<unix ms><8 hex>". The activity id in front is what
// lets an order be found from its number alone.
var orderNoPattern = regexp.MustCompile(`^[1-9][0-9]{0,18}-[0-9a-f]{8,40}$`)

// NewOrderNo returns a fresh order number for the activity.
func NewOrderNo(aid int64) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%d-%d%08x", aid, time.Now().UnixMilli(), binary.BigEndian.Uint32(b[:]))
}

// ParseOrderNo returns the activity id an order number belongs to.
func ParseOrderNo(orderNo string) (int64, bool) {
	if len(orderNo) > 64 || !orderNoPattern.MatchString(orderNo) {
		return 0, false
	}
	aid, err := strconv.ParseInt(orderNo[:strings.IndexByte(orderNo, '-')], 10, 64)
	return aid, err == nil && aid > 0
}

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{8,64}$`)

// ValidRequestID reports whether a client request id is acceptable.
func ValidRequestID(id string) bool { return requestIDPattern.MatchString(id) }

// RateLimit is the per-user request counter of the gateway's limiter (go-zero
// PeriodLimit). It is not activity-scoped: the limit is per buyer across activities.
func (k Keys) RateLimit(uid int64) string {
	return k.Prefix + "sk:rl:" + strconv.FormatInt(uid, 10)
}
