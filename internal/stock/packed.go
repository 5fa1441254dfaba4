package stock

import (
	"fmt"
	"strconv"
	"strings"
)

// An order is one field of the activity's orders hash (Keys.OrdersHash): its short number -> one string
// of ten space-separated values, in this order:
//
//	state uid qty expire_at created_at request_id cseq useq er es
//
// state is reserved | paid | cancelled | expired; expire_at and created_at are ms (Redis's
// clock); cseq and useq the stock hash's seq at the order's creation and at its last change
// (0: restored from MySQL, before any seq); er and es the ids of its reserved and settling
// outbox entries, "-" when it has none. No value holds a space (request ids are
// [A-Za-z0-9_-]). scripts/order.lua is the same format in Lua (packOrder, unpackOrder), the
// one copy every script shares; this is the one copy in Go.
type packed struct {
	Order
	Cseq, Useq int64
	Er, Es     string // "" when none
}

// orderValues is how many values a packed order holds.
const orderValues = 10

// noEntry stands for an absent entry id in a packed order.
const noEntry = "-"

// pack is p as the orders hash holds it.
func (p packed) pack() string {
	id := func(v string) string {
		if v == "" {
			return noEntry
		}
		return v
	}
	i := strconv.FormatInt
	return strings.Join([]string{p.State, i(p.UID, 10), i(p.Quantity, 10), i(p.ExpireAt, 10), i(p.CreatedAt, 10),
		p.RequestID, i(p.Cseq, 10), i(p.Useq, 10), id(p.Er), id(p.Es)}, " ")
}

// unpackOrder reads order orderNo of activity aid from its value in the orders hash; false when
// v is not a packed order.
func unpackOrder(aid int64, orderNo, v string) (packed, bool) {
	f := strings.Split(v, " ")
	if len(f) != orderValues || f[0] == "" {
		return packed{}, false
	}
	var n [orderValues]int64
	for _, j := range []int{1, 2, 3, 4, 6, 7} {
		x, err := strconv.ParseInt(f[j], 10, 64)
		if err != nil {
			return packed{}, false
		}
		n[j] = x
	}
	id := func(v string) string {
		if v == noEntry {
			return ""
		}
		return v
	}
	return packed{Order: Order{OrderNo: orderNo, ActivityID: aid, State: f[0], UID: n[1], Quantity: n[2],
		ExpireAt: n[3], CreatedAt: n[4], RequestID: f[5]}, Cseq: n[6], Useq: n[7], Er: id(f[8]), Es: id(f[9])}, true
}

// readOrder is unpackOrder with the error of a value that is not a packed order.
func readOrder(aid int64, orderNo, v string) (packed, error) {
	p, ok := unpackOrder(aid, orderNo, v)
	if !ok {
		return packed{}, fmt.Errorf("activity %d: order %s is not a packed order: %q", aid, orderNo, v)
	}
	return p, nil
}
