// Package domain is the vocabulary the services share: order states, the bounds on what a
// caller may send, order numbers and request ids, and the activity, order and draw entry as the
// books hold them. The gateway, the scripts' wrapper (internal/stock) and the writer all use
// it; it knows nothing of Redis, MySQL or HTTP. Each check returns an INVALID_ARGUMENT
// *xerr.Error naming the field.
package domain

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/seckill/seckill/internal/xerr"
)

// Order states, as Redis's packed orders and the ledger (seckill_order.status) store them;
// StateNone is "no order yet". reserved -> paid | cancelled | expired; the last three are
// terminal (docs/DESIGN.md, "Order states").
const (
	StateNone     = ""
	StateReserved = "reserved"
	// StateQueued is not an order's state: a reservation answered as an entry of the
	// activity's opening draw (no order yet).
	StateQueued    = "queued"
	StatePaid      = "paid"
	StateCancelled = "cancelled"
	StateExpired   = "expired"
)

// Terminal reports whether an order in state s can never change again.
func Terminal(s string) bool {
	return s == StatePaid || s == StateCancelled || s == StateExpired
}

// Bounds on caller input (docs/API.md).
const (
	MaxQuantity       = 1_000_000_000 // units in one reservation, and a per-user limit
	MaxDelta          = 1_000_000_000 // one stock adjustment, either way
	MaxStock          = 1_000_000_000 // an activity's initial stock
	MaxNameChars      = 128
	MaxPayTimeoutSecs = 86400
	MaxOrderNoLen     = 64
)

func invalid(format string, args ...any) error {
	return xerr.Newf(xerr.InvalidArgument, format, args...)
}

// CheckActivityID checks an activity id.
func CheckActivityID(aid int64) error {
	if aid < 1 {
		return invalid("activity_id must be >= 1")
	}
	return nil
}

// Bounds of a page of a list (GET /v1/admin/activities).
const (
	MaxPageSize = 100
	MaxPage     = 1_000_000
)

// CheckPage checks a page number (from 1) and a page size.
func CheckPage(page, size int64) error {
	if page < 1 || page > MaxPage {
		return invalid("page must be within 1..%d", MaxPage)
	}
	if size < 1 || size > MaxPageSize {
		return invalid("size must be within 1..%d", MaxPageSize)
	}
	return nil
}

// MaxOrderListSize bounds a page of the merchant's orders list (GET .../orders; its default,
// 100, is the route's in api/seckill.api).
const MaxOrderListSize = 500

// CheckOrderListSize checks the size of a page of the merchant's orders list.
func CheckOrderListSize(size int64) error {
	if size < 1 || size > MaxOrderListSize {
		return invalid("size must be within 1..%d", MaxOrderListSize)
	}
	return nil
}

// CheckOrderStatus checks an orders list's status filter: "" (every status) or an order's state.
func CheckOrderStatus(s string) error {
	switch s {
	case StateNone, StateReserved, StatePaid, StateCancelled, StateExpired:
		return nil
	}
	return invalid("status must be one of reserved, paid, cancelled, expired (or empty)")
}

// CheckUID checks a buyer id.
func CheckUID(uid int64) error {
	if uid < 1 {
		return invalid("uid must be >= 1")
	}
	return nil
}

// CheckQuantity checks the units of one reservation.
func CheckQuantity(q int64) error {
	if q < 1 || q > MaxQuantity {
		return invalid("quantity must be in 1..%d", MaxQuantity)
	}
	return nil
}

// CheckDelta checks a stock adjustment.
func CheckDelta(d int64) error {
	if d == 0 || d > MaxDelta || d < -MaxDelta {
		return invalid("delta must be a non-zero integer within ±%d", MaxDelta)
	}
	return nil
}

// CheckRequestID checks a client's idempotency key.
func CheckRequestID(id string) error {
	if !ValidRequestID(id) {
		return invalid("request_id must be 8-64 characters of [A-Za-z0-9_-]")
	}
	return nil
}

// MaxTradeNoLen bounds a payment provider's payment id (trade_no).
const MaxTradeNoLen = 64

// CheckTradeNo checks a payment provider's payment id: 1-64 characters of [A-Za-z0-9_-].
func CheckTradeNo(tradeNo string) error {
	if len(tradeNo) < 1 || len(tradeNo) > MaxTradeNoLen || !idChars(tradeNo) {
		return invalid("trade_no must be 1-%d characters of [A-Za-z0-9_-]", MaxTradeNoLen)
	}
	return nil
}

// CheckAmount checks an amount (quantity x price, smallest currency unit).
func CheckAmount(amount int64) error {
	if amount < 0 || amount > MaxAmount {
		return invalid("amount must be an integer in 0..%d", int64(MaxAmount))
	}
	return nil
}

// CheckOrderNo checks an order number's shape and returns the activity it belongs to.
func CheckOrderNo(orderNo string) (int64, error) {
	aid, ok := ParseOrderNo(orderNo)
	if !ok {
		return 0, invalid("order_no is malformed")
	}
	return aid, nil
}

// orderNoPattern: "<activity id>-<unix ms><8 hex random><16 hex tag>". The activity id in
// front is what lets an order be found from its number alone; the tag (OrderNoTagLen hex
// digits of HMAC-SHA256 over the rest, under the service's order key) lets a forged or
// random number be refused by its shape, before any Redis or MySQL read.
var orderNoPattern = regexp.MustCompile(OrderNoPattern)

// OrderNoPattern is orderNoPattern's expression (the API document's pattern of order_no).
const OrderNoPattern = `^[1-9][0-9]{0,18}-[0-9a-f]{8,40}$`

// OrderNoTagLen is the length of an order number's check tag (hex digits: 64 bits).
const OrderNoTagLen = 16

// NewOrderNo returns a fresh order number for the activity, tagged under key (nil: an
// unkeyed checksum, which still stops random numbers but not a forger who read this code).
func NewOrderNo(aid int64, key ...[]byte) string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	// "%d-%d%08x" without fmt: this runs on every reservation
	b := make([]byte, 0, 13+8)
	b = strconv.AppendInt(b, time.Now().UnixMilli(), 10)
	b = hex.AppendEncode(b, r[:])
	return orderNoOfBody(aid, string(b), firstKey(key))
}

// VerifyOrderNo returns the activity of an order number whose shape is right and whose
// tag is key's (nil key: the unkeyed checksum); false otherwise.
func VerifyOrderNo(orderNo string, key []byte) (int64, bool) {
	aid, ok := ParseOrderNo(orderNo)
	if !ok || len(orderNo)-strings.IndexByte(orderNo, '-')-1 < 8+OrderNoTagLen {
		return 0, false
	}
	body, tag := orderNo[:len(orderNo)-OrderNoTagLen], orderNo[len(orderNo)-OrderNoTagLen:]
	if !hmac.Equal([]byte(tag), []byte(orderNoTag(key, body))) {
		return 0, false
	}
	return aid, true
}

func firstKey(keys [][]byte) []byte {
	if len(keys) > 0 {
		return keys[0]
	}
	return nil
}

// ParseOrderNo returns the activity id an order number belongs to.
func ParseOrderNo(orderNo string) (int64, bool) {
	if len(orderNo) > MaxOrderNoLen || !orderNoPattern.MatchString(orderNo) {
		return 0, false
	}
	aid, err := strconv.ParseInt(orderNo[:strings.IndexByte(orderNo, '-')], 10, 64)
	return aid, err == nil && aid > 0
}

// ValidRequestID reports whether a client request id is acceptable: 8-64 characters of
// [A-Za-z0-9_-] (a byte loop, not a regexp: it runs on every reservation).
func ValidRequestID(id string) bool {
	return len(id) >= 8 && len(id) <= 64 && idChars(id)
}

// idChars reports whether every byte of s is one of [A-Za-z0-9_-].
func idChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// MaxHorizon bounds an activity's times: start and end lie within this of now. A year-3000
// end, or one sent in milliseconds or nanoseconds, is refused before anything is written
// (Redis cannot expire a key that far out, and a script would fail half-way).
const MaxHorizon = 10 * 365 * 24 * time.Hour

// NewActivity is what a merchant asks for when creating an activity.
type NewActivity struct {
	SkuID             int64
	Name              string
	Stock             int64 // the total it starts with
	StartTime         int64 // unix seconds
	EndTime           int64 // unix seconds
	PerUserLimit      int64
	PayTimeoutSeconds int64
	DrawSeconds       int64 // the opening draw's window (0: none)
	Price             int64 // the unit price in the smallest currency unit (0: free)
}

// MaxPrice bounds an activity's unit price (in the smallest unit of the shop's currency).
const MaxPrice = 1_000_000_000

// MaxAmount bounds an order's amount (quantity x price): the largest integer a JSON number
// (a float64) and Redis's Lua hold exactly.
const MaxAmount = 1<<53 - 1

// MaxDrawSeconds bounds an activity's opening draw window.
const MaxDrawSeconds = 600

// CheckNewActivity checks a new activity against the bounds of docs/API.md at time now.
func CheckNewActivity(a NewActivity, now time.Time) error {
	lo, hi := now.Add(-MaxHorizon).Unix(), now.Add(MaxHorizon).Unix()
	switch n := utf8.RuneCountInString(a.Name); {
	case a.SkuID < 1:
		return invalid("sku_id must be >= 1")
	case !utf8.ValidString(a.Name) || n < 1 || n > MaxNameChars:
		return invalid("name must be 1-%d characters of valid UTF-8", MaxNameChars)
	case a.Stock < 1 || a.Stock > MaxStock:
		return invalid("stock must be in 1..%d", MaxStock)
	case a.StartTime < 0:
		return invalid("start_time must be unix seconds >= 0")
	case a.EndTime <= a.StartTime:
		return invalid("end_time must be after start_time")
	case a.StartTime < lo || a.StartTime > hi || a.EndTime > hi:
		return invalid("start_time and end_time must be unix seconds within 10 years of now")
	case a.PerUserLimit < 1 || a.PerUserLimit > MaxQuantity:
		return invalid("per_user_limit must be in 1..%d", MaxQuantity)
	case a.PayTimeoutSeconds < 1 || a.PayTimeoutSeconds > MaxPayTimeoutSecs:
		return invalid("pay_timeout_seconds must be in 1..%d", MaxPayTimeoutSecs)
	case a.DrawSeconds < 0 || a.DrawSeconds > MaxDrawSeconds:
		return invalid("draw_seconds must be in 0..%d", MaxDrawSeconds)
	case a.DrawSeconds > 0 && a.StartTime+a.DrawSeconds >= a.EndTime:
		return invalid("draw_seconds must end before end_time")
	case a.Price < 0 || a.Price > MaxPrice:
		return invalid("price must be in 0..%d", MaxPrice)
	case a.Price > 0 && a.PerUserLimit > MaxAmount/a.Price:
		return invalid("price x per_user_limit must be at most %d", int64(MaxAmount))
	}
	return nil
}

// CheckActivityEdit checks an edit before the start (docs/API.md, PUT .../activities/{id})
// against create's bounds, stock only when sent (hasStock; it must equal the total, which the
// inventory service checks). That the new start is in the future is CheckStartsLater's, asked
// after STARTED (an edit of a started activity is STARTED whatever it asks).
func CheckActivityEdit(a NewActivity, hasStock bool, now time.Time) error {
	if !hasStock {
		a.Stock = 1 // not sent: the total stays, and no bound applies
	}
	return CheckNewActivity(a, now)
}

// CheckStartsLater refuses an edit's start_time that is not after now.
func CheckStartsLater(start int64, now time.Time) error {
	if start <= now.Unix() {
		return invalid("start_time must be in the future")
	}
	return nil
}
