package stock

import (
	"strconv"
)

// Keys builds every Redis key name of the inventory; nothing else in the code base spells one
// (the gateway's own keys are api/gatekeys'; the inventory service's app tokens and Bloom
// filter, rpcserver.AppsKey and activity.BloomKey; reconciliation's records, internal/reconcile's;
// the activity's leases are named by their owners). Each
// activity's keys share the hash tag {a<ID>}, so a script touches one cluster slot.
// Prefix isolates deployments (and tests) sharing one Redis.
type Keys struct {
	Prefix string
}

func (k Keys) base(aid int64) string {
	return k.Prefix + "sk:{a" + strconv.FormatInt(aid, 10) + "}:"
}

// reserve is reserve.lua's KEYS (stock, pending, orders, buyers, events), built on one base:
// every batch builds them.
func (k Keys) reserve(aid int64) []string {
	b := k.base(aid)
	return []string{b + "stock", b + "pending", b + "o", b + "u", b + "events"}
}

// Stock is the hash `total remaining locked sold start end limit ttl sku name exp epoch price`
// (and `draw_at drawn` with a draw).
func (k Keys) Stock(aid int64) string { return k.base(aid) + "stock" }

// OrdersHash is the activity's orders: the order's short number (shortNo: the order_no without
// the activity id and the tag) -> the order packed in one string (packOrder: state, uid,
// quantity, expire_at, created_at, request id, cseq, useq and its entry ids). Every key of the
// activity names an order by its short number; Store.orderNoOf makes the order_no of it.
func (k Keys) OrdersHash(aid int64) string { return k.base(aid) + "o" }

// Buyers is the activity's buyers hash: heldField(uid) -> the quantity the buyer holds in the
// activity (reserved + paid), and ReqField(uid, request id) -> the order's short number per request
// (idempotency, scoped by buyer as well as activity, so one buyer's request id can never
// return another's order).
func (k Keys) Buyers(aid int64) string { return k.base(aid) + "u" }

// heldPrefix starts every heldField: the scripts that find a buyer from an order (expiry)
// are handed it.
const heldPrefix = "h:"

// heldField is the buyers hash's field of the quantity uid holds.
func heldField(uid int64) string { return heldPrefix + strconv.FormatInt(uid, 10) }

// ReqField is the buyers hash's field of uid's request id: r<uid in base 36>:<request id>, one field
// per (uid, request id) and no heldField (request ids hold no ':'); base 36 keeps a 12-digit uid's
// field with a 17-character request id in the allocator's 32-byte class (docs/DESIGN.md "Redis keys").
func ReqField(uid int64, requestID string) string {
	return "r" + strconv.FormatInt(uid, 36) + ":" + requestID
}

// Trades is the activity's hash short number -> the payment provider's trade_no of every order
// paid through a provider notification (confirm.lua): the same trade_no again is a replay,
// another one ORDER_PAID.
func (k Keys) Trades(aid int64) string { return k.base(aid) + "trades" }

// tradeClaim holds the order_no a provider's trade_no paid (or is paying), across activities:
// a trade_no pays one order (Store.Confirm claims it before confirm.lua runs).
func (k Keys) tradeClaim(tradeNo string) string { return k.Prefix + "sk:trade:" + tradeNo }

// Pending is the zset the expiry job walks: one member per reservation batch, the short numbers
// of the orders it made space-separated, scored by their expire_at (ms, the same for all).
func (k Keys) Pending(aid int64) string { return k.base(aid) + "pending" }

// Events is the activity's outbox stream.
func (k Keys) Events(aid int64) string { return k.base(aid) + "events" }

// missing caches "no such activity" (Store.Missing).
func (k Keys) missing(aid int64) string { return k.base(aid) + "missing" }

// lock is a lease of activity aid (go-zero RedisLock, Store.Lock): of "" is the lock of its cache
// backfill (and rebuild); any other of is a purpose its owner names once (docs/DESIGN.md, "Redis
// keys"): the key is of + "lock". Each owner's tests pin its lease's key name.
func (k Keys) lock(aid int64, of string) string { return k.base(aid) + of + "lock" }

// epochClaim is the highest epoch a loss rebuild of the activity claimed (claim_epoch.lua): no
// stock hash of a lower epoch is written. The key keeps its first name, "fence".
func (k Keys) epochClaim(aid int64) string { return k.base(aid) + "fence" }

// adjustKeys is the activity's hash of the merchant's Idempotency-Keys of stock adjustments:
// 'mid:key' -> the fingerprint and the applied result (adjust.lua), expiring with the activity.
func (k Keys) adjustKeys(aid int64) string { return k.base(aid) + "idem" }

// StockBack is the pub/sub channel on which the scripts that return stock to remaining publish
// the activity id (a channel, not a key: it has no slot).
func (k Keys) StockBack() string { return k.Prefix + "sk:stock-back" }

// active is the zset of warm activity ids scored by end time (unix seconds).
func (k Keys) active() string { return k.Prefix + "sk:active" }

// DrawEntries is the draw's hash uid -> "qty request_id entry_id" of every entrant (one entry per buyer).
func (k Keys) DrawEntries(aid int64) string { return k.base(aid) + "entries" }

// entryAddrs is the draw's hash client address -> entrants from it (enter.lua bounds it).
func (k Keys) entryAddrs(aid int64) string { return k.base(aid) + "eaddr" }

// Draw is the draw's progress hash `cursor winners lost status` (status "drawing" | "done").
func (k Keys) Draw(aid int64) string { return k.base(aid) + "draw" }
