package stock

import (
	"fmt"
	"reflect"
	"strings"
)

// The other scripts' ARGV, named once like reserve's (codec.go): each struct below is one
// script's arguments, its fields in order the positions and each `lua` tag the name. Go builds
// the ARGV from the struct (argvOf); the script reads ARGV[ARG_<NAME>] through the constants
// newScript renders from the same struct and prepends to it (argConstants). A last field that
// is a slice is a list: its elements from ARG_<NAME> on; a slice of structs, a list of groups
// tagged `group:"<prefix>"`, each element's fields in order, which the script reads through
// <PREFIX>_<NAME> (a field's place in its group, from 1) and <PREFIX>_WIDTH (a group's values).
// TestScriptArgsByName and TestScriptsReadArgvByName check both sides.

// confirmArgs is confirm.lua's ARGV: the buyer's own pay (UID >= 1, TradeNo "") or the
// payment provider's (UID 0 and the notification's fields).
type confirmArgs struct {
	ActivityID  int64  `lua:"activity_id"`
	OrderNo     string `lua:"order_no"`    // the events'
	Short       string `lua:"short"`       // its name in the orders hash and the trades hash (shortNo)
	UID         int64  `lua:"uid"`         // the caller, whose order it must be; 0: the provider
	TraceParent string `lua:"traceparent"` // the caller's W3C traceparent ("": none), the entry's 'tp'
	TradeNo     string `lua:"trade_no"`    // the provider's payment id, the entry's 'tn'
	Amount      int64  `lua:"amount"`      // the notification's amount
	Price       int64  `lua:"price"`       // the activity's unit price
}

// releaseArgs is release.lua's ARGV.
type releaseArgs struct {
	ActivityID  int64  `lua:"activity_id"`
	OrderNo     string `lua:"order_no"`    // the events'
	Short       string `lua:"short"`       // its name in the orders hash (shortNo)
	UID         int64  `lua:"uid"`         // the order's owner (>= 1)
	Target      string `lua:"target"`      // domain.StateCancelled or domain.StateExpired
	StockBack   string `lua:"stock_back"`  // the channel the activity id is published on (Keys.StockBack)
	TraceParent string `lua:"traceparent"` // the caller's W3C traceparent ("": none), the entry's 'tp'
	HeldField   string `lua:"held_field"`  // the owner's holding's field in the buyers hash (heldField)
}

// adjustArgs is adjust.lua's ARGV.
type adjustArgs struct {
	ActivityID     int64  `lua:"activity_id"`
	Delta          int64  `lua:"delta"`           // non-zero
	StockBack      string `lua:"stock_back"`      // the channel the activity id is published on when Delta > 0
	TraceParent    string `lua:"traceparent"`     // the caller's W3C traceparent ("": none), the entry's 'tp'
	IdempotencyKey string `lua:"idempotency_key"` // the merchant's Idempotency-Key ("mid:key"; "": none)
	Fingerprint    string `lua:"fingerprint"`     // the request's, recorded with the key's result
}

// activityArgs are the activity's window and terms, the stock hash's fields that warmup.lua
// and edit_meta.lua both write: embedded in both's arguments, its fields in its place
// (argFields).
type activityArgs struct {
	Start      int64  `lua:"start"` // unix seconds
	End        int64  `lua:"end"`   // unix seconds
	Limit      int64  `lua:"limit"`
	PayTimeout int64  `lua:"pay_timeout"` // seconds
	SkuID      int64  `lua:"sku_id"`
	ExpireAt   int64  `lua:"expire_at"` // unix seconds
	Name       string `lua:"name"`
	DrawAt     int64  `lua:"draw_at"` // ms; 0: no draw
	Price      int64  `lua:"price"`
}

// warmupArgs is warmup.lua's ARGV: the stock hash's fields (domain.Activity's).
type warmupArgs struct {
	Total     int64 `lua:"total"`
	Remaining int64 `lua:"remaining"`
	Locked    int64 `lua:"locked"`
	Sold      int64 `lua:"sold"`
	activityArgs
	Epoch int64  `lua:"epoch"`
	Drawn string `lua:"drawn"` // "1": the draw is done
}

// editMetaArgs is edit_meta.lua's ARGV: the activity's new window and terms, then where and
// what to tell the gateways.
type editMetaArgs struct {
	activityArgs
	StockBack string `lua:"stock_back"` // the channel (Keys.StockBack)
	Message   string `lua:"message"`    // windowMessage
}

// endSaleArgs is end_sale.lua's ARGV.
type endSaleArgs struct {
	End int64 `lua:"end"` // the new end (unix seconds)
}

// expireDueArgs is expire_due.lua's ARGV: these, then the pending members, from ARG_MEMBERS.
type expireDueArgs struct {
	ActivityID int64  `lua:"activity_id"`
	StockBack  string `lua:"stock_back"`  // the channel the activity id is published on (Keys.StockBack)
	HeldPrefix string `lua:"held_prefix"` // a buyer's holding field is it and the uid (heldField)
	Limit      int    `lua:"limit"`       // the most orders to expire
	// Members are the pending members picked, each with its orders' order_nos.
	Members []expireMemberArgs `lua:"members" group:"member"`
}

// expireMemberArgs is one pending member's group of expire_due.lua's ARGV.
type expireMemberArgs struct {
	Shorts   string `lua:"shorts"`    // the member: one reservation batch's short numbers (shortNo)
	OrderNos string `lua:"order_nos"` // the same orders' order_nos in the same order, the events'
}

// claimEpochArgs is claim_epoch.lua's ARGV.
type claimEpochArgs struct {
	Epoch    int64 `lua:"epoch"`     // the epoch the rebuild will bump MySQL to
	ExpireAt int64 `lua:"expire_at"` // the claim key's (unix seconds)
}

// lostArgs is lost.lua's ARGV.
type lostArgs struct {
	Epoch int64 `lua:"epoch"` // the epoch the Acker saw
}

// drawAdvanceArgs is draw_advance.lua's ARGV: these, then the losers, from ARG_LOSERS.
type drawAdvanceArgs struct {
	From    int64    `lua:"from"`    // the cursor the chunk started at
	To      int64    `lua:"to"`      // the cursor after it
	Winners int64    `lua:"winners"` // the chunk's
	Done    string   `lua:"done"`    // "1": the draw is done
	Losers  []string `lua:"losers"`  // each loser's request id field in the buyers hash (ReqField)
}

// enterArgs is enter.lua's ARGV: these, then the items, from ARG_ITEMS.
type enterArgs struct {
	ActivityID  int64           `lua:"activity_id"`
	SellByMs    int64           `lua:"sell_by_ms"`   // as reserveArgs's
	WantEntries string          `lua:"want_entries"` // "1": each answer carries its outbox entry (WithEntries)
	TraceParent string          `lua:"traceparent"`  // the caller's W3C traceparent ("": none), each entry's 'tp'
	PerAddress  int             `lua:"per_address"`  // the most entrants from one client address (0: no bound)
	Items       []enterItemArgs `lua:"items" group:"item"`
}

// enterItemArgs is one item's group of enter.lua's ARGV.
type enterItemArgs struct {
	UID       int64  `lua:"uid"`
	Qty       int64  `lua:"qty"`
	RequestID string `lua:"request_id"`
	Addr      string `lua:"addr"` // the client address ("": none, not counted)
}

// restoreArgs is restore.lua's ARGV: the keys' expire-at, then the orders, from ARG_ORDERS.
type restoreArgs struct {
	ExpireAt int64              `lua:"expire_at"` // unix seconds
	Orders   []restoreOrderArgs `lua:"orders" group:"order"`
}

// restoreOrderArgs is one order's group of restore.lua's ARGV: the order as MySQL has it.
type restoreOrderArgs struct {
	No         string `lua:"no"` // the order's short number (shortNo)
	UID        int64  `lua:"uid"`
	Qty        int64  `lua:"qty"`
	State      string `lua:"state"`
	ExpireAtMs int64  `lua:"expire_at_ms"`
	RequestID  string `lua:"request_id"`
	CreatedMs  int64  `lua:"created_ms"`
	ReqField   string `lua:"req_field"` // the request id's field in the buyers hash (ReqField)
}

// restoreHoldingsArgs is restore_holdings.lua's ARGV: the keys' expire-at, then the buyers'
// holdings, from ARG_HOLDINGS.
type restoreHoldingsArgs struct {
	ExpireAt int64                `lua:"expire_at"` // unix seconds
	Holdings []restoreHoldingArgs `lua:"holdings" group:"holding"`
}

// restoreHoldingArgs is one buyer's group of restore_holdings.lua's ARGV.
type restoreHoldingArgs struct {
	HeldField string `lua:"held_field"` // the buyer's holding's field in the buyers hash (heldField)
	Qty       int64  `lua:"qty"`        // what the buyer holds (reserved + paid)
}

// restoreEntriesArgs is restore_entries.lua's ARGV: the keys' expire-at, then the draw's
// entries, from ARG_ENTRIES.
type restoreEntriesArgs struct {
	ExpireAt int64              `lua:"expire_at"` // unix seconds
	Entries  []restoreEntryArgs `lua:"entries" group:"entry"`
}

// restoreEntryArgs is one entry's group of restore_entries.lua's ARGV.
type restoreEntryArgs struct {
	UID   int64  `lua:"uid"`
	Value string `lua:"value"` // as the entries hash holds it (entryValue)
}

// restoreLosersArgs is restore_losers.lua's ARGV: the keys' expire-at, then the losers, from
// ARG_LOSERS.
type restoreLosersArgs struct {
	ExpireAt int64    `lua:"expire_at"` // unix seconds
	Losers   []string `lua:"losers"`    // each loser's request id field in the buyers hash (ReqField)
}

// ackedArgs is acked.lua's ARGV: the entries to check, from ARG_ENTRIES on.
type ackedArgs struct {
	Entries []ackedEntryArgs `lua:"entries" group:"entry"`
}

// ackedEntryArgs is one entry's group of acked.lua's ARGV.
type ackedEntryArgs struct {
	Epoch int64  `lua:"epoch"` // the stock hash's epoch the entry was written under ('ep')
	ID    string `lua:"id"`
}

// argFields are the fields of the arguments struct type t in ARGV's order, an embedded
// struct's fields in its place (each Index the path from t).
func argFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.Anonymous || f.Type.Kind() != reflect.Struct {
			out = append(out, f)
			continue
		}
		for _, e := range argFields(f.Type) {
			e.Index = append([]int{i}, e.Index...)
			out = append(out, e)
		}
	}
	return out
}

// argvOf is a script's ARGV built from its arguments struct v: the fields' values in order
// (argFields), a slice (the last field) as its elements, the first at the field's position;
// an element that is a struct (a group) as its fields in order.
func argvOf(v any) []any {
	rv := reflect.ValueOf(v)
	fields := argFields(rv.Type())
	out := make([]any, 0, len(fields))
	for _, sf := range fields {
		f := rv.FieldByIndex(sf.Index)
		if f.Kind() != reflect.Slice {
			out = append(out, f.Interface())
			continue
		}
		for j := range f.Len() {
			e := f.Index(j)
			if e.Kind() != reflect.Struct {
				out = append(out, e.Interface())
				continue
			}
			for k := range e.NumField() {
				out = append(out, e.Field(k).Interface())
			}
		}
	}
	return out
}

// argConstants is the Lua prelude of the script whose arguments struct is args: ARG_<NAME> for
// each field (argFields: an embedded struct's in its place) and, when the last is a list of
// groups, <PREFIX>_<NAME> for each field of a group and <PREFIX>_WIDTH.
func argConstants(args any) string {
	out := luaConstants("ARG", reflect.Zero(flatArgs(reflect.TypeOf(args))).Interface())
	if prefix, group, ok := argGroup(reflect.TypeOf(args)); ok {
		out += luaConstants(prefix, reflect.Zero(group).Interface()) +
			fmt.Sprintf("local %s_WIDTH = %d\n", prefix, group.NumField())
	}
	return out
}

// flatArgs is t with each embedded struct replaced by its fields (argFields), the struct
// luaConstants numbers.
func flatArgs(t reflect.Type) reflect.Type {
	fields := argFields(t)
	for i := range fields {
		fields[i].Index = nil
	}
	return reflect.StructOf(fields)
}

// argGroup is the list of groups that ends the arguments struct type t, if it does: its
// constants' prefix and its element type.
func argGroup(t reflect.Type) (prefix string, group reflect.Type, ok bool) {
	fields := argFields(t)
	f := fields[len(fields)-1]
	if f.Type.Kind() != reflect.Slice || f.Type.Elem().Kind() != reflect.Struct {
		return "", nil, false
	}
	return strings.ToUpper(f.Tag.Get("group")), f.Type.Elem(), true
}
