package stock

import (
	"fmt"
	"reflect"
	"strings"
)

// The reserve script's protocol, named once. Each struct below is one part of a call: its
// fields, in order, are the positions, and each `lua` tag the name. Go encodes and decodes
// through the structs; the Lua side reads the same positions through constants rendered
// from them (luaConstants, prepended to reserve.lua): ARG_<NAME> for ARGV, ITEM_<NAME> for an
// item's offset within its group, REPLY_<NAME> and REPLAY_<NAME> for the replies. Changing
// a position is changing a struct; TestReserveCodec checks both sides against it.

// reserveArgs is reserve.lua's ARGV: these, then each item's reserveItemArgs.
type reserveArgs struct {
	ActivityID int64 `lua:"activity_id"`
	// SellByMs: nothing sold once Redis's clock is past it (ms since the epoch; 0: none):
	// degrade mode's lease on the activity's mode, so a call that reaches Redis late (a
	// write stall, a failover's CLIENT PAUSE, a retry) cannot sell after the lease lapsed.
	SellByMs int64 `lua:"sell_by_ms"`
	// WantEntries "1": the reply carries each reserved item's outbox entry (WithEntries).
	WantEntries string `lua:"want_entries"`
	TraceParent string `lua:"traceparent"` // the caller's W3C traceparent ("": none), each entry's 'tp'
	// Serve "1": the draw serves its entrants; else an activity whose draw is not done sells
	// nothing (-17: the caller takes the batch to enter.lua).
	Serve string `lua:"serve"`
	// Distinct "1": no two items have the same uid or the same short number, so no item sees
	// what an earlier one of the call did (its buyer's holding, its request id, its number):
	// the script keeps no table of those. argv sets it from the items, never the caller.
	Distinct string `lua:"distinct"`
	// HeldPrefix starts each buyer's holding's field in the buyers hash, the uid after it
	// (heldField; as expire_due.lua's): one argument per call, not one per item. argv sets it.
	HeldPrefix string `lua:"held_prefix"`
}

// reserveItemArgs is one item's group of ARGV, after reserveArgs: item i's field f is
// ARGV[len(reserveArgs) + len(reserveItemArgs)*(i-1) + f].
type reserveItemArgs struct {
	OrderNo   string `lua:"order_no"` // fresh, drawn in Go: the events' number
	Short     string `lua:"short"`    // its name in the activity's keys (shortNo)
	UID       int64  `lua:"uid"`
	Qty       int64  `lua:"qty"`
	RequestID string `lua:"request_id"`
	ReqField  string `lua:"req_field"` // the request id's field in the buyers hash (ReqField)
}

// argv is the call's ARGV: a's fields, then each item's, in the structs' order.
func (a reserveArgs) argv(items []reserveItemArgs) []any {
	out := make([]any, 0, reserveArgCount+reserveItemArgCount*len(items))
	a.Distinct, a.HeldPrefix = flag(distinctItems(items)), heldPrefix
	out = append(out, a.ActivityID, a.SellByMs, a.WantEntries, a.TraceParent, a.Serve, a.Distinct, a.HeldPrefix)
	for _, it := range items {
		out = append(out, it.OrderNo, it.Short, it.UID, it.Qty, it.RequestID, it.ReqField)
	}
	return out
}

// distinctItems reports whether no two items have the same uid or the same short number.
func distinctItems(items []reserveItemArgs) bool {
	if len(items) < 2 {
		return true
	}
	uids, shorts := make(map[int64]struct{}, len(items)), make(map[string]struct{}, len(items))
	for _, it := range items {
		uids[it.UID], shorts[it.Short] = struct{}{}, struct{}{}
	}
	return len(uids) == len(items) && len(shorts) == len(items)
}

// reserveReply is the head of reserve.lua's reply; then each item's answer (REPLY_HEAD + i: 0
// when reserved, a code < 0 when refused, a replay's reserveReplay).
type reserveReply struct {
	Code       int64 `lua:"code"`      // 0 (a whole batch's refusal is {code}, code < 0)
	Remaining  int64 `lua:"remaining"` // the stock hash's before the call (0: absent)
	ExpireAtMs int64 `lua:"expire_at_ms"`
	CreatedMs  int64 `lua:"created_ms"` // every order the call makes has these two
	// EntryID is the batch's one outbox entry, every reserved item's event in it ("": none
	// reserved); Entry, with WantEntries, that entry as the stream holds it (a string; else 0).
	EntryID string `lua:"entry_id"`
	Entry   any    `lua:"entry"`
}

// reserveReplay is an item's answer when its request id names an order: the order as it is
// now (only Code and OrderNo when the order is gone).
type reserveReplay struct {
	Code       int64  `lua:"code"` // codeReplay
	OrderNo    string `lua:"order_no"`
	State      string `lua:"state"`
	Qty        int64  `lua:"qty"`
	ExpireAtMs int64  `lua:"expire_at_ms"`
	CreatedMs  int64  `lua:"created_ms"`
	Remaining  int64  `lua:"remaining"`
	// Unsent, with WantEntries: the order's entries still in the outbox (unsent.lua's flat
	// list), which the answer waits on.
	Unsent []any `lua:"unsent"`
}

var (
	reserveArgCount     = reflect.TypeFor[reserveArgs]().NumField()
	reserveItemArgCount = reflect.TypeFor[reserveItemArgs]().NumField()
	reserveHead         = fields[reserveReply]()
	replayFields        = fields[reserveReplay]()
)

// decodeReplay reads an item's replay answer v; ok false when the order is gone.
func decodeReplay(v []any) (r reserveReplay, ok bool) {
	decode(v, &r)
	return r, len(v) >= replayFields-1 // Unsent is there only WithEntries
}

// decode sets each field of the struct at dst from the reply value at its position (a missing
// one stays zero): int64 and string fields as toInt and toString read them, []any and any as
// they are.
func decode(res []any, dst any) {
	v := reflect.ValueOf(dst).Elem()
	for i := range min(v.NumField(), len(res)) {
		switch f := v.Field(i); f.Kind() {
		case reflect.Int64:
			f.SetInt(toInt(res, i))
		case reflect.String:
			f.SetString(toString(res, i))
		case reflect.Interface: // as it is
			if res[i] != nil {
				f.Set(reflect.ValueOf(res[i]))
			}
		default:
			if l, ok := res[i].([]any); ok {
				f.Set(reflect.ValueOf(l))
			}
		}
	}
}

// reserveLuaConstants is the Lua prelude of reserve.lua: its protocol's positions.
var reserveLuaConstants = luaConstants("ARG", reserveArgs{}) + luaConstants("ITEM", reserveItemArgs{}) +
	luaConstants("REPLY", reserveReply{}) + luaConstants("REPLAY", reserveReplay{}) +
	fmt.Sprintf("local ARG_COUNT, ITEM_COUNT, REPLY_HEAD = %d, %d, %d\n", reserveArgCount, reserveItemArgCount,
		reserveHead)

// luaConstants renders one Lua local per field of the struct v, <PREFIX>_<TAG> = its position
// (1-based).
func luaConstants(prefix string, v any) string {
	t := reflect.TypeOf(v)
	var names, values []string
	for i := range t.NumField() {
		names = append(names, prefix+"_"+strings.ToUpper(t.Field(i).Tag.Get("lua")))
		values = append(values, fmt.Sprint(i+1))
	}
	return "local " + strings.Join(names, ", ") + " = " + strings.Join(values, ", ") + "\n"
}

// The other scripts' replies, read by name in Go (their Lua builds them with the table
// constructors their headers document, in these structs' order). A reply longer than its
// struct carries a list after it, as the struct says.

// warmupReply is warmup.lua's.
type warmupReply struct {
	Created   int64 `lua:"created"` // 1 created, 0 it existed (never overwritten)
	Remaining int64 `lua:"remaining"`
}

// changeReply is confirm.lua's and release.lua's: the order's state now and the change's
// outbox entry, or, for a repeat that changed nothing (EntryID ""), in Entry the order's
// entries still in the outbox (unsent.lua's list).
type changeReply struct {
	Code    int64  `lua:"code"`
	State   string `lua:"state"`
	EntryID string `lua:"entry_id"`
	Entry   any    `lua:"entry"` // the packed entry (a string), or the unsent list
}

// adjustReply is adjust.lua's: the counters after the change, and its outbox entry, or, for
// the idempotency key's repeat (Code codeReplay), in EntryID the first one's entries still in
// the outbox (unsent.lua's list).
type adjustReply struct {
	Code      int64  `lua:"code"`
	Total     int64  `lua:"total"`
	Remaining int64  `lua:"remaining"`
	Locked    int64  `lua:"locked"`
	Sold      int64  `lua:"sold"`
	EntryID   any    `lua:"entry_id"` // a string, or the unsent list
	Entry     string `lua:"entry"`
}

// expireDueReply is the head of expire_due.lua's; the expired orders' numbers follow.
type expireDueReply struct {
	Expired        int64 `lua:"expired"`
	MembersRemoved int64 `lua:"members_removed"`
}

// ackedReply is the head of acked.lua's; then per entry checked 1 (same epoch: deleted) or 0.
type ackedReply struct {
	Code  int64  `lua:"code"`
	Epoch int64  `lua:"epoch"`
	Seq   int64  `lua:"seq"`
	Line  string `lua:"line"` // the serving Redis's replication id
}

// enterReply is the head of enter.lua's reply; each item's enterAnswer follows.
type enterReply struct {
	Code int64 `lua:"code"` // 0
}

// enterAnswer is an item's answer in enter.lua's reply (after its code 0): the buyer's entry,
// or only Code (< 0) when refused.
type enterAnswer struct {
	Code      int64  `lua:"code"` // 2: entered
	Qty       int64  `lua:"qty"`
	RequestID string `lua:"request_id"`
	DrawAtMs  int64  `lua:"draw_at_ms"`
	Entry     []any  `lua:"entry"` // WithEntries: {id, entry} while the stream holds it
}

// restoreReply is the restore scripts' (restore, restore_holdings, restore_entries,
// restore_losers): the groups of the batch written (restore_losers': the losers taken, each
// set to the loser value or naming an order already).
type restoreReply struct {
	Code    int64 `lua:"code"` // 0
	Written int64 `lua:"written"`
}

// doneReply is end_sale.lua's and lost.lua's: 1 done (moved, deleted), 0 nothing to do.
type doneReply struct {
	Done int64 `lua:"done"`
}

// decoded is res read into a T (decode).
func decoded[T any](res []any) T {
	var v T
	decode(res, &v)
	return v
}

// fields is how many reply values T names: a list, if any, follows them.
func fields[T any]() int { return reflect.TypeFor[T]().NumField() }
