package stock

import (
	"context"
	"errors"
	"reflect"
	"time"

	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
)

// ReserveAs runs reserve.lua for one item with a given order number (ReserveBatch draws a fresh
// one), so a test can make one collide: the script's whole reply, or the item's refusal.
func (s *Store) ReserveAs(ctx context.Context, aid, uid, qty int64, requestID, orderNo string) ([]any, error) {
	call := reserveArgs{ActivityID: aid, WantEntries: s.wantEntry(), Serve: "0"}
	res, err := s.run(ctx, reserveScript, aid, s.keys.reserve(aid), call.argv([]reserveItemArgs{reserveItem(orderNo,
		domain.ReserveItem{UID: uid, Qty: qty, RequestID: requestID})})...)
	if err != nil {
		return nil, err
	}
	if code, ok := res[reserveHead].(int64); ok && code < 0 {
		return nil, codeError(code)
	}
	return res, nil
}

// ReserveBatchAs runs reserve.lua once for items with the given order numbers: each item's code
// (0 reserved, 1 a replay).
func (s *Store) ReserveBatchAs(ctx context.Context, aid int64, items []domain.ReserveItem, orderNos []string) ([]int64,
	error) {
	call := reserveArgs{ActivityID: aid, WantEntries: s.wantEntry(), Serve: "0"}
	group := make([]reserveItemArgs, len(items))
	qty := make([]int64, len(items))
	for i, it := range items {
		group[i] = reserveItem(orderNos[i], it)
		qty[i] = it.Qty
	}
	res, err := s.run(ctx, reserveScript, aid, s.keys.reserve(aid), call.argv(group)...)
	if err != nil {
		return nil, err
	}
	replies, err := parseReserve(aid, res, orderNos, qty, s.entries)
	if err != nil {
		return nil, err
	}
	codes := make([]int64, len(items))
	for i, r := range replies {
		codes[i] = r.code
	}
	return codes, nil
}

// ReserveKeys is Keys.reserve, for tests.
func (k Keys) ReserveKeys(aid int64) []string {
	return k.reserve(aid)
}

// ErrOrderNoTaken is errOrderNoTaken, for tests.
var ErrOrderNoTaken = errOrderNoTaken

// PackOrder is an order as the orders hash holds it (packed.pack), for tests.
func PackOrder(o domain.Order, cseq, useq int64, er, es string) string {
	v, err := packed{Order: o, Cseq: cseq, Useq: useq, Er: er, Es: es}.pack()
	if err != nil {
		panic(err)
	}
	return v
}

// UnpackOrder is unpackOrder, for tests.
func UnpackOrder(aid int64, orderNo, v string) (o domain.Order, cseq, useq int64, er, es string, ok bool) {
	p, ok := unpackOrder(aid, orderNo, v)
	return p.Order, p.Cseq, p.Useq, p.Er, p.Es, ok
}

// EntryLua is scripts/entry.lua, for tests.
var EntryLua = entryLua

// OrderLua is scripts/order.lua, for tests.
var OrderLua = orderLua

// ReserveReplyFields runs reserve.lua once for items with the given order numbers and returns
// its reply as the codec decodes it, every field under its name: the head's (the batch's entry
// among them), and each item's (a replay's fields, or 0 or its code under "answer").
func (s *Store) ReserveReplyFields(ctx context.Context, aid int64, items []domain.ReserveItem,
	orderNos []string) (map[string]any, []map[string]any, error) {
	call := reserveArgs{ActivityID: aid, WantEntries: s.wantEntry(), Serve: "0"}
	group := make([]reserveItemArgs, len(items))
	for i, it := range items {
		group[i] = reserveItem(orderNos[i], it)
	}
	res, err := s.run(ctx, reserveScript, aid, s.keys.reserve(aid), call.argv(group)...)
	if err != nil {
		return nil, nil, err
	}
	answers := make([]map[string]any, len(items))
	for i := range items {
		v := res[reserveHead+i]
		if l, ok := v.([]any); ok {
			r, _ := decodeReplay(l)
			r.OrderNo = s.replayOrderNo(aid, r.OrderNo)
			answers[i] = byName(r)
		} else {
			answers[i] = map[string]any{"answer": v}
		}
	}
	return byName(decoded[reserveReply](res)), answers, nil
}

// byName is the struct v's fields under their lua names.
func byName(v any) map[string]any {
	out := map[string]any{}
	rv := reflect.ValueOf(v)
	for i := range rv.NumField() {
		out[rv.Type().Field(i).Tag.Get("lua")] = rv.Field(i).Interface()
	}
	return out
}

// ErrDrawBusy is errDrawBusy, for tests.
var ErrDrawBusy = errDrawBusy

// WindowMessage is windowMessage, for tests.
var WindowMessage = windowMessage

// ShortNo is shortNo, for tests: an order's name in its activity's keys.
var ShortNo = shortNo

// HeldField is heldField, for tests.
var HeldField = heldField

// ScriptCount is how many scripts LoadScripts loads.
var ScriptCount = len(allScripts)

// EnterAs runs enter.lua for items (ReserveBatch reaches it only through reserve.lua, which
// checks the sell-by first).
func (s *Store) EnterAs(ctx context.Context, aid int64, items []domain.ReserveItem, sellBy time.Time) ([]ReserveResult,
	error) {
	return s.enter(ctx, aid, items, sellBy)
}

// Expire expires one reserved order whose expire_at has passed, whoever owns it: release.lua
// called as an operator would (the expiry job uses ExpireDue). No code outside the tests calls it.
func (s *Store) Expire(ctx context.Context, orderNo string) ([]Entry, error) {
	aid, err := s.CheckOrderNo(orderNo)
	if err != nil {
		return nil, err
	}
	o, err := s.orderOwner(ctx, aid, orderNo)
	if err != nil {
		return nil, err
	}
	if o == 0 {
		return nil, xerr.ErrOrderNotFound
	}
	return s.release(ctx, aid, orderNo, o, domain.StateExpired)
}

// orderOwner reads the order's uid, which the release script must be given (there is no
// "any owner"). An absent order gives 0.
func (s *Store) orderOwner(ctx context.Context, aid int64, orderNo string) (int64, error) {
	v, err := s.rds.HgetCtx(ctx, s.keys.OrdersHash(aid), shortNo(orderNo))
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, dep(err)
	}
	p, err := readOrder(aid, orderNo, v)
	return p.UID, err
}

// EntriesOf is the outbox entries result r waits on (Awaited gathers them for a caller).
func EntriesOf(r ReserveResult) []Entry { return r.entries }

// NewEntry is newEntry, for the benchmark.
func NewEntry(aid int64, id string, v any) (Entry, error) { return newEntry(aid, id, v) }
