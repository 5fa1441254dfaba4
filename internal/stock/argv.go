package stock

import "reflect"

// The other scripts' ARGV, named once like reserve's (codec.go): each struct below is one
// script's arguments, its fields in order the positions and each `lua` tag the name. Go builds
// the ARGV from the struct (argvOf); the script reads ARGV[ARG_<NAME>] through the constants
// newScript renders from the same struct and prepends to it. TestScriptArgsByName and
// TestScriptsReadArgvByName check both sides.

// confirmArgs is confirm.lua's ARGV: the buyer's own pay (UID >= 1, TradeNo "") or the
// payment provider's (UID 0 and the notification's fields).
type confirmArgs struct {
	ActivityID  int64  `lua:"activity_id"`
	OrderNo     string `lua:"order_no"`
	UID         int64  `lua:"uid"`         // the caller, whose order it must be; 0: the provider
	TraceParent string `lua:"traceparent"` // the caller's W3C traceparent ("": none), the entry's 'tp'
	TradeNo     string `lua:"trade_no"`    // the provider's payment id, the entry's 'tn'
	Amount      int64  `lua:"amount"`      // the notification's amount
	Price       int64  `lua:"price"`       // the activity's unit price
}

// releaseArgs is release.lua's ARGV.
type releaseArgs struct {
	ActivityID  int64  `lua:"activity_id"`
	OrderNo     string `lua:"order_no"`
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

// warmupArgs is warmup.lua's ARGV: the stock hash's fields (Meta's).
type warmupArgs struct {
	Total      int64  `lua:"total"`
	Remaining  int64  `lua:"remaining"`
	Locked     int64  `lua:"locked"`
	Sold       int64  `lua:"sold"`
	Start      int64  `lua:"start"` // unix seconds
	End        int64  `lua:"end"`   // unix seconds
	Limit      int64  `lua:"limit"`
	PayTimeout int64  `lua:"pay_timeout"` // seconds
	SkuID      int64  `lua:"sku_id"`
	ExpireAt   int64  `lua:"expire_at"` // unix seconds
	Name       string `lua:"name"`
	Epoch      int64  `lua:"epoch"`
	DrawAt     int64  `lua:"draw_at"` // ms; 0: no draw
	Drawn      string `lua:"drawn"`   // "1": the draw is done
	Price      int64  `lua:"price"`
}

// editMetaArgs is edit_meta.lua's ARGV: the activity's new window and terms, then where and
// what to tell the gateways.
type editMetaArgs struct {
	Start      int64  `lua:"start"` // unix seconds
	End        int64  `lua:"end"`   // unix seconds
	Limit      int64  `lua:"limit"`
	PayTimeout int64  `lua:"pay_timeout"` // seconds
	SkuID      int64  `lua:"sku_id"`
	ExpireAt   int64  `lua:"expire_at"` // unix seconds
	Name       string `lua:"name"`
	DrawAt     int64  `lua:"draw_at"` // ms; 0: no draw
	Price      int64  `lua:"price"`
	StockBack  string `lua:"stock_back"` // the channel (Keys.StockBack)
	Message    string `lua:"message"`    // windowMessage
}

// endSaleArgs is end_sale.lua's ARGV.
type endSaleArgs struct {
	End int64 `lua:"end"` // the new end (unix seconds)
}

// expireDueArgs is expire_due.lua's ARGV: these, then the pending members, from ARG_MEMBERS.
type expireDueArgs struct {
	ActivityID int64    `lua:"activity_id"`
	StockBack  string   `lua:"stock_back"`  // the channel the activity id is published on (Keys.StockBack)
	HeldPrefix string   `lua:"held_prefix"` // a buyer's holding field is it and the uid (heldField)
	Limit      int      `lua:"limit"`       // the most orders to expire
	Members    []string `lua:"members"`     // pending members: one reservation batch's order numbers each
}

// fenceArgs is fence.lua's ARGV.
type fenceArgs struct {
	Epoch    int64 `lua:"epoch"`     // the epoch the rebuild will bump MySQL to
	ExpireAt int64 `lua:"expire_at"` // the fence key's (unix seconds)
}

// lostArgs is lost.lua's ARGV.
type lostArgs struct {
	Epoch int64 `lua:"epoch"` // the epoch the Acker saw
}

// drawMarkArgs is draw_mark.lua's ARGV: these, then the losers, from ARG_LOSERS.
type drawMarkArgs struct {
	From    int64    `lua:"from"`    // the cursor the chunk started at
	To      int64    `lua:"to"`      // the cursor after it
	Winners int64    `lua:"winners"` // the chunk's
	Done    string   `lua:"done"`    // "1": the draw is done
	Losers  []string `lua:"losers"`  // each loser's request id field in the buyers hash (ReqField)
}

// argvOf is a script's ARGV built from its arguments struct v: the fields' values in order, a
// slice (the last field) as its elements, the first at the field's position.
func argvOf(v any) []any {
	rv := reflect.ValueOf(v)
	out := make([]any, 0, rv.NumField())
	for i := range rv.NumField() {
		f := rv.Field(i)
		if f.Kind() != reflect.Slice {
			out = append(out, f.Interface())
			continue
		}
		for j := range f.Len() {
			out = append(out, f.Index(j).Interface())
		}
	}
	return out
}
