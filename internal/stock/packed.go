package stock

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/seckill/seckill/internal/domain"
)

// An order is one field of the activity's orders hash (Keys.OrdersHash): its short number -> one string
// of ten space-separated values, in this order:
//
//	state uid qty expire_at created_at request_id cseq useq er es
//
// state is one letter (r reserved, p paid, c cancelled, e expired); uid and qty decimal; created_at
// the ms (Redis's clock) in base 36 (digits 0-9a-z), expire_at its difference from created_at in ms
// (base 36, '-' in front when negative); cseq the stock hash's seq at the order's creation (base 36)
// and useq its difference from cseq at the order's last change (0 when they are equal; cseq and useq
// 0: restored from MySQL, before any seq); er and es the ids of its reserved and settling outbox
// entries, "-" when it has none, else <seq> (base 36) when the id's ms is created_at, else
// <seq>:<ms - created_at> (base 36). Each number is as short as it can be: Redis keeps the value in a
// size class of its allocator (64 B for a reserved order of a 12-digit uid and a 17-character
// request id, docs/DESIGN.md "Redis keys"). No value holds a space (request ids are [A-Za-z0-9_-]).
// scripts/order.lua is the same format in Lua (packOrder, unpackOrder), the one copy every script
// shares; this is the one copy in Go.
type packed struct {
	domain.Order
	Cseq, Useq int64
	Er, Es     string // "" when none, else <ms>-<seq> as XADD made it
}

// orderValues is how many values a packed order holds.
const orderValues = 10

// noEntry stands for an absent entry id in a packed order.
const noEntry = "-"

// packedStates is each state's letter in a packed order.
var packedStates = map[string]string{domain.StateReserved: "r", domain.StatePaid: "p",
	domain.StateCancelled: "c", domain.StateExpired: "e"}

// unpackedStates is packedStates the other way.
var unpackedStates = map[string]string{"r": domain.StateReserved, "p": domain.StatePaid,
	"c": domain.StateCancelled, "e": domain.StateExpired}

// pack is p as the orders hash holds it; an error when its state is not an order's or an entry id
// is not <ms>-<seq>.
func (p packed) pack() (string, error) {
	st, ok := packedStates[p.State]
	if !ok {
		return "", fmt.Errorf("pack order %s: state %q", p.OrderNo, p.State)
	}
	er, err := packEntryID(p.Er, p.CreatedAt)
	if err != nil {
		return "", err
	}
	es, err := packEntryID(p.Es, p.CreatedAt)
	if err != nil {
		return "", err
	}
	i := strconv.FormatInt
	return strings.Join([]string{st, i(p.UID, 10), i(p.Quantity, 10), i(p.ExpireAt-p.CreatedAt, 36),
		i(p.CreatedAt, 36), p.RequestID, i(p.Cseq, 36), i(p.Useq-p.Cseq, 36), er, es}, " "), nil
}

// packEntryID is entry id (<ms>-<seq>) as a packed order holds it, relative to created (ms).
func packEntryID(id string, created int64) (string, error) {
	if id == "" {
		return noEntry, nil
	}
	ms, seq, ok := strings.Cut(id, "-")
	m, err1 := strconv.ParseInt(ms, 10, 64)
	s, err2 := strconv.ParseInt(seq, 10, 64)
	if !ok || err1 != nil || err2 != nil || s < 0 {
		return "", fmt.Errorf("pack order: entry id %q", id)
	}
	if m == created {
		return strconv.FormatInt(s, 36), nil
	}
	return strconv.FormatInt(s, 36) + ":" + strconv.FormatInt(m-created, 36), nil
}

// unpackEntryID is the entry id v of a packed order stands for ("" for noEntry).
func unpackEntryID(v string, created int64) (string, bool) {
	if v == noEntry {
		return "", true
	}
	seq, d, rel := strings.Cut(v, ":")
	s, ok := base36(seq, false)
	if !ok {
		return "", false
	}
	var delta int64
	if rel {
		if delta, ok = base36(d, true); !ok {
			return "", false
		}
	}
	return strconv.FormatInt(created+delta, 10) + "-" + strconv.FormatInt(s, 10), true
}

// base36 reads a number of a packed order: digits 0-9a-z only, '-' in front when signed allows it
// (what scripts/order.lua reads alike).
func base36(v string, signed bool) (int64, bool) {
	digits := v
	if signed {
		digits = strings.TrimPrefix(v, "-")
	}
	if digits == "" || strings.TrimLeft(digits, "0123456789abcdefghijklmnopqrstuvwxyz") != "" {
		return 0, false
	}
	x, err := strconv.ParseInt(v, 36, 64)
	return x, err == nil
}

// decimal reads a decimal number of a packed order (uid, qty): digits only.
func decimal(v string) (int64, bool) {
	if v == "" || strings.TrimLeft(v, "0123456789") != "" {
		return 0, false
	}
	x, err := strconv.ParseInt(v, 10, 64)
	return x, err == nil
}

// unpackOrder reads order orderNo of activity aid from its value in the orders hash; false when
// v is not a packed order.
func unpackOrder(aid int64, orderNo, v string) (packed, bool) {
	f := strings.Split(v, " ")
	if len(f) != orderValues {
		return packed{}, false
	}
	state, ok := unpackedStates[f[0]]
	uid, ok1 := decimal(f[1])
	qty, ok2 := decimal(f[2])
	exp, ok3 := base36(f[3], true)
	created, ok4 := base36(f[4], false)
	cseq, ok5 := base36(f[6], false)
	useq, ok6 := base36(f[7], true)
	if !ok || !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || f[5] == "" {
		return packed{}, false
	}
	er, ok7 := unpackEntryID(f[8], created)
	es, ok8 := unpackEntryID(f[9], created)
	if !ok7 || !ok8 {
		return packed{}, false
	}
	return packed{Order: domain.Order{OrderNo: orderNo, ActivityID: aid, State: state, UID: uid, Quantity: qty,
		ExpireAt: created + exp, CreatedAt: created, RequestID: f[5]}, Cseq: cseq, Useq: cseq + useq,
		Er: er, Es: es}, true
}

// readOrder is unpackOrder with the error of a value that is not a packed order.
func readOrder(aid int64, orderNo, v string) (packed, error) {
	p, ok := unpackOrder(aid, orderNo, v)
	if !ok {
		return packed{}, fmt.Errorf("activity %d: order %s is not a packed order: %q", aid, orderNo, v)
	}
	return p, nil
}
