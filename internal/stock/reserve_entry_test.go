package stock_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/stock"
)

// A fresh order number that is taken already (a field of the orders hash) is refused with
// nothing written.
func TestReserveTakenOrderNoWritesNothing(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 10, Limit: 5})
	r, err := stocktest.Reserve(ctx, e.Store, aid, 1, 1, reqID(1))
	if err != nil {
		t.Fatal(err)
	}
	before := e.Dump()
	_, err = e.Store.ReserveAs(ctx, aid, 2, 1, reqID(2), r.OrderNo)
	if !errors.Is(err, stock.ErrOrderNoTaken) {
		t.Fatalf("reserve with a taken order number: %v, want errOrderNoTaken", err)
	}
	if after := e.Dump(); !reflect.DeepEqual(before, after) {
		t.Fatalf("a refused reservation changed Redis:\nbefore %v\nafter  %v", before, after)
	}
	if _, err := e.Store.ReserveAs(ctx, aid, 2, 1, reqID(2), e.Store.NewOrderNo(aid)); err != nil {
		t.Fatalf("reserve with a fresh order number: %v", err)
	}
	e.CheckInvariant(aid)
}

// A Store built WithEntries answers a reservation with its batch's outbox entry exactly as the
// stream holds it; without it the script returns the entry's id only and Reserve still answers in
// full.
func TestReserveEntryOnlyWithEntries(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 10, Limit: 5})
	plain, err := stocktest.Reserve(ctx, e.Store, aid, 1, 1, reqID(1))
	if err != nil || plain.OrderNo == "" || plain.Remaining != 9 || plain.ExpireAt <= plain.CreatedAt {
		t.Fatalf("reserve without entries: %+v, %v", plain, err)
	}
	res, err := e.Store.ReserveAs(ctx, aid, 2, 1, reqID(2), e.Store.NewOrderNo(aid))
	if _, id := res[4].(string); err != nil || len(res) != 7 || !id || res[5] != int64(0) || res[6] != int64(0) {
		t.Fatalf("script reply without entries: %v, %v (want the head with the entry id and no entry, then 0)",
			res, err)
	}
	if got, err := e.Store.ReserveBatch(ctx, aid, []domain.ReserveItem{{UID: 9, Qty: 1, RequestID: reqID(9)}},
		time.Time{}); err != nil || got[0].Err != nil || stock.EntriesOf(got[0]) != nil {
		t.Fatalf("reserve without entries: %+v, %v", got, err)
	}
	withEntries := stock.NewStore(e.Redis, e.Keys, stock.WithEntries())
	items := []domain.ReserveItem{{UID: 3, Qty: 1, RequestID: reqID(3)}}
	out, err := withEntries.ReserveBatch(ctx, aid, items, time.Time{})
	if err != nil || out[0].Err != nil {
		t.Fatal(out, err)
	}
	r, got := out[0].Reservation, stock.EntriesOf(out[0])
	if len(got) != 1 {
		t.Fatalf("reservation with %d entries, want 1", len(got))
	}
	msgs, err := e.Raw.XRange(ctx, e.Keys.Events(aid), got[0].ID, got[0].ID).Result()
	if err != nil || len(msgs) != 1 {
		t.Fatalf("entry %s in the stream: %v, %v", got[0].ID, msgs, err)
	}
	want := map[string]any{}
	for f, v := range msgs[0].Values {
		want[f] = fmt.Sprint(v)
	}
	as, err := event.EntryAttributes(got[0].Values)
	if err != nil || len(as) != 1 || !reflect.DeepEqual(got[0].Values, want) || as[0][event.FieldOrderNo] != r.OrderNo ||
		got[0].ActivityID != aid || got[0].Seq != 4 {
		t.Fatalf("returned entry %+v (%v), stream entry %v, order %s", got[0], err, want, r.OrderNo)
	}
}

// Keys.reserve spells the same keys as the one-key methods every other caller uses.
func TestReserveKeysAreTheKeys(t *testing.T) {
	k := stock.Keys{Prefix: "t:"}
	want := []string{k.Stock(42), k.Pending(42), k.OrdersHash(42), k.Buyers(42), k.Events(42)}
	if got := k.ReserveKeys(42); !reflect.DeepEqual(got, want) {
		t.Fatalf("reserve keys %v, want %v", got, want)
	}
}
