package stock_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/stock"
)

// entry.lua and event.Event.Pack are one format: the entries the Lua packers make are the
// strings Go packs for the same events, and read back in Go as those events.
func TestLuaPacksEntriesAsGo(t *testing.T) {
	e := stocktest.New(t)
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	ono := "12-1700000000123c0ffee00deadbeefcafe0123"
	reserved := event.Event{Type: event.Reserved, ActivityID: 12, SkuID: 7, OrderNo: ono, UID: 3, Quantity: 2,
		AtMs: 1700000000123, RequestID: "req_0000-01", ExpireMs: 1700000900123, Epoch: 4}
	paid := reserved
	paid.Type, paid.AtMs, paid.CreatedMs = event.Paid, 1700000000500, reserved.AtMs
	byProvider := paid // confirm.lua puts a provider's trade_no before the traceparent
	byProvider.TradeNo = "trade_9-X"
	adjusted := event.Event{Type: event.Adjusted, ActivityID: 12, SkuID: 7, Delta: -5, AtMs: 1700000000600, Epoch: 4}
	entered := event.Event{Type: event.Entered, ActivityID: 12, SkuID: 7, UID: 9, Quantity: 1,
		AtMs: 1700000000700, RequestID: "req-00000009", Epoch: 4}
	src := stock.EntryLua + `
return {
  packOrderEntry('reserved', '12', '7', ARGV[1], '3', '2', '1700000000123', 'req_0000-01', nil,
    '1700000900123', '4', '41', entryTrace('')),
  packOrderEntry('paid', '12', '7', ARGV[1], '3', '2', '1700000000500', 'req_0000-01', '1700000000123',
    '1700000900123', '4', '42', entryTrace(ARGV[2])),
  packEntry({t = 'adjusted', aid = '12', sku = '7', d = '-5', at = '1700000000600', ep = '4', tp = ''}),
  packEntry({t = 'entered', aid = '12', sku = '7', uid = '9', qty = '1', at = '1700000000700', rid = 'req-00000009',
    ep = '4', sq = '43', tp = ARGV[2]}),
  packOrderEntry('paid', '12', '7', ARGV[1], '3', '2', '1700000000500', 'req_0000-01', '1700000000123',
    '1700000900123', '4', '44', ' tn=trade_9-X' .. entryTrace(ARGV[2])),
}`
	v, err := e.Raw.Eval(ctx, src, nil, ono, tp).StringSlice()
	if err != nil || len(v) != 5 {
		t.Fatalf("entry.lua: %v, %v", v, err)
	}
	for i, c := range []struct {
		ev  event.Event
		seq int64
		tp  string
	}{{reserved, 41, ""}, {paid, 42, tp}, {adjusted, 0, ""}, {entered, 43, tp}, {byProvider, 44, tp}} {
		want, err := c.ev.Pack(c.seq, c.tp)
		if err != nil || v[i] != want {
			t.Errorf("Lua packed %q, Go %q (%v)", v[i], want, err)
		}
		c.ev.EventID = "1-0"
		if c.ev.Type == event.Reserved {
			c.ev.CreatedMs = c.ev.AtMs
		}
		got, err := event.FromStream("1-0", map[string]any{event.FieldEntry: v[i]})
		if err != nil || got != c.ev {
			t.Errorf("Lua's %q read as %+v (%v), want %+v", v[i], got, err, c.ev)
		}
	}
}

// entry.lua's batch entry (packBatchHead, batchLines, as reserve.lua uses them) is the string
// event.PackBatch makes of the same events, and reads back in Go as those events, in order.
func TestLuaPacksBatchEntriesAsGo(t *testing.T) {
	e := stocktest.New(t)
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	one := event.Event{Type: event.Reserved, ActivityID: 12, SkuID: 7, OrderNo: "12-1700000000123c0ffee00deadbeef01",
		UID: 3, Quantity: 2, AtMs: 1700000000123, RequestID: "req_0000-01", ExpireMs: 1700000900123, Epoch: 4}
	two := one
	two.OrderNo, two.UID, two.Quantity, two.RequestID = "12-1700000000123c0ffee00deadbeef02", 8, 1, "req-00000002"
	src := stock.EntryLua + `
local p = {}
batchLines(p, 2, {ARGV[1], '3', 'req_0000-01', ARGV[2], '8', 'req-00000002'}, {0, 3}, 1, 2, 3, {'2', '1'})
p[1] = packBatchHead('reserved', '12', '7', '1700000000123', '1700000900123', '4', '41', entryTrace(ARGV[3]))
local traced = table.concat(p)
p[1] = packBatchHead('reserved', '12', '7', '1700000000123', '1700000900123', '4', '41', entryTrace(''))
return {traced, table.concat(p, '', 1, 2)}`
	v, err := e.Raw.Eval(ctx, src, nil, one.OrderNo, two.OrderNo, tp).StringSlice()
	if err != nil || len(v) != 2 {
		t.Fatalf("entry.lua: %v, %v", v, err)
	}
	for i, c := range []struct {
		evs []event.Event
		tp  string
	}{{[]event.Event{one, two}, tp}, {[]event.Event{one}, ""}} {
		want, err := event.PackBatch(c.evs, 41, c.tp)
		if err != nil || v[i] != want {
			t.Errorf("Lua packed %q, Go %q (%v)", v[i], want, err)
		}
		got, err := event.FromEntry("1-0", map[string]any{event.FieldEntry: v[i]})
		if err != nil || len(got) != len(c.evs) {
			t.Fatalf("Lua's %q read as %+v (%v)", v[i], got, err)
		}
		for j, ev := range c.evs {
			ev.EventID, ev.CreatedMs = "1-0", ev.AtMs
			if got[j] != ev {
				t.Errorf("Lua's %q: event %d read as %+v, want %+v", v[i], j, got[j], ev)
			}
		}
	}
}

// fromEntry reads an outbox entry's events and their attributes.
func fromEntry(t *testing.T, id string, values map[string]any) ([]event.Event, []map[string]string) {
	t.Helper()
	evs, err := event.FromEntry(id, values)
	if err != nil {
		t.Fatal(err)
	}
	as, err := event.EntryAttributes(values)
	if err != nil {
		t.Fatal(err)
	}
	return evs, as
}

// Every script that writes an outbox entry writes it packed in the one field event.FieldEntry,
// with the stock hash's epoch and the caller's traceparent when traced, and the entry a change
// returns for its acknowledgement is the stream's, its epoch read.
func TestEveryScriptWritesPackedEntries(t *testing.T) {
	e := stocktest.New(t, stock.WithEntries())
	aid := e.Warm(stocktest.Spec{Total: 10, Limit: 5, PayTimeout: 1, Epoch: 3})
	acked := map[string]stock.Entry{}
	keep := func(es []stock.Entry, err error) error {
		for _, en := range es {
			acked[en.ID] = en
		}
		return err
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{9}, SpanID: trace.SpanID{8},
		TraceFlags: trace.FlagsSampled})
	traced := trace.ContextWithSpanContext(ctx, sc)
	tp := event.TraceParent(traced)
	res, err := e.Store.ReserveBatch(traced, aid, []domain.ReserveItem{{UID: 1, Qty: 1, RequestID: reqID(1)},
		{UID: 2, Qty: 2, RequestID: reqID(2)}, {UID: 3, Qty: 1, RequestID: reqID(3)}}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if keep(stock.EntriesOf(r), r.Err) != nil {
			t.Fatal(r.Err)
		}
	}
	if err := keep(e.Store.Confirm(traced, res[0].OrderNo, 1)); err != nil {
		t.Fatal(err)
	}
	if err := keep(e.Store.Release(ctx, res[1].OrderNo, 2, domain.StateCancelled)); err != nil {
		t.Fatal(err)
	}
	if _, es, err := e.Store.Adjust(traced, aid, 3, "", ""); keep(es, err) != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	if done, err := e.Store.ExpireDue(ctx, aid, 10); err != nil || len(done) != 1 {
		t.Fatalf("expire due: %v, %v", done, err)
	}
	draw := e.Warm(stocktest.Spec{ID: aid + 1, Total: 10, DrawAt: time.Now().Add(time.Hour), Epoch: 3})
	entrant, err := e.Store.ReserveBatch(traced, draw, []domain.ReserveItem{{UID: 4, Qty: 1, RequestID: reqID(4)}},
		time.Time{})
	if err != nil || keep(stock.EntriesOf(entrant[0]), entrant[0].Err) != nil || entrant[0].State != domain.StateQueued {
		t.Fatalf("entry: %+v, %v", entrant, err)
	}
	var types []event.Type
	for _, a := range []int64{aid, draw} {
		msgs, err := e.Raw.XRange(ctx, e.Keys.Events(a), "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if _, ok := m.Values[event.FieldEntry]; !ok || len(m.Values) != 1 {
				t.Errorf("entry %s: %v, want one field %q", m.ID, m.Values, event.FieldEntry)
			}
			evs, as := fromEntry(t, m.ID, m.Values)
			ev := evs[0]
			for _, ev := range evs {
				types = append(types, ev.Type)
			}
			got := as[0][event.FieldTraceParent]
			if byTraced := ev.Type != event.Cancelled && ev.Type != event.Expired; byTraced != (got == tp) {
				t.Errorf("entry %s %v: traceparent %q, traced call %v", m.ID, m.Values, got, byTraced)
			}
			en, ok := acked[m.ID]
			if ev.Type == event.Expired { // the expiry job's: nobody is answered for it
				continue
			}
			want := map[string]any{}
			for k, v := range m.Values {
				want[k] = fmt.Sprint(v)
			}
			if !ok || !reflect.DeepEqual(en.Values, want) || en.Epoch != 3 || ev.Epoch != 3 {
				t.Errorf("entry %s %v: acknowledged as %+v", m.ID, m.Values, en)
			}
		}
	}
	want := []event.Type{event.Reserved, event.Reserved, event.Reserved, event.Paid, event.Cancelled, event.Adjusted,
		event.Expired, event.Entered}
	if !reflect.DeepEqual(types, want) {
		t.Fatalf("entries of types %v, want %v", types, want)
	}
}
