package book_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/internal/book"
)

// item is uid's reservation of qty with request n.
func item(uid, qty int64, n int) domain.ReserveItem {
	return domain.ReserveItem{UID: uid, Qty: qty, RequestID: rid(n)}
}

// batch reserves items in one ReserveBatch and wants each item's code, in order.
func batch(t *testing.T, b book.Book, aid int64, items []domain.ReserveItem, w ...xerr.Code) []stock.ReserveResult {
	t.Helper()
	res, err := b.ReserveBatch(ctx, aid, items)
	if err != nil {
		t.Fatalf("batch of %d: %v", len(items), err)
	}
	if len(res) != len(items) {
		t.Fatalf("batch of %d: %d results", len(items), len(res))
	}
	for i, r := range res {
		want(t, fmt.Sprintf("item %d (%+v)", i, items[i]), r.Err, w[i])
	}
	return res
}

// wantReserved fails the test unless r is a reservation (a replay when replay) of qty with remaining left.
func wantReserved(t *testing.T, what string, r stock.ReserveResult, qty, remaining int64, replay bool) {
	t.Helper()
	if r.OrderNo == "" || r.Quantity != qty || r.Remaining != remaining || r.Replay != replay ||
		r.State != domain.StateReserved {
		t.Fatalf("%s: %+v, want %d reserved with %d left (replay %v)", what, r.Reservation, qty, remaining, replay)
	}
}

// batchCases: every single-reservation rule holds for an item of a batch, answered as a loop of
// single reservations in the batch's order would answer it.
var batchCases = []contractCase{
	{"batch: each item answered as a single reservation in its place", open(6, 2, 600), func(t *testing.T,
		b book.Book, aid int64) {
		before := reserve(t, b, aid, 1, 1, 1, "OK") // 5 left
		res := batch(t, b, aid, []domain.ReserveItem{
			item(1, 1, 1),  // a replay of the order made before the batch
			item(1, 2, 9),  // 1 held before the batch + 2 > 2
			item(2, 2, 2),  // 3 left
			item(2, 2, 2),  // the same request again: a replay of the item before
			item(2, 1, 3),  // 2 held by the items before + 1 > 2
			item(3, 2, 4),  // 1 left
			item(4, 2, 5),  // 1 left < 2
			item(4, 1, 6),  // fits: 0 left
			item(5, 1, 7),  // none left
			item(0, 1, 8),  // a bad uid
			item(6, 0, 10), // a bad quantity
			{UID: 6, Qty: 1},
		}, "OK", xerr.LimitExceeded, "OK", "OK", xerr.LimitExceeded, "OK", xerr.SoldOut, "OK", xerr.SoldOut,
			xerr.InvalidArgument, xerr.InvalidArgument, xerr.InvalidArgument)
		wantReserved(t, "replay of the earlier order", res[0], 1, 5, true)
		if res[0].OrderNo != before.OrderNo {
			t.Fatalf("replay answered order %s, want %s", res[0].OrderNo, before.OrderNo)
		}
		wantReserved(t, "buyer 2's first item", res[2], 2, 3, false)
		wantReserved(t, "buyer 2's same request", res[3], 2, 3, true)
		if res[3].OrderNo != res[2].OrderNo {
			t.Fatalf("the same request twice in a batch made orders %s and %s", res[2].OrderNo, res[3].OrderNo)
		}
		wantReserved(t, "buyer 3", res[5], 2, 1, false)
		wantReserved(t, "buyer 4's item that fits", res[7], 1, 0, false)
		again := reserve(t, b, aid, 2, 2, 2, "OK") // one order for the request, still
		if !again.Replay || again.OrderNo != res[2].OrderNo || again.Remaining != 0 {
			t.Fatalf("replay after the batch: %+v, want order %s, 0 left", again, res[2].OrderNo)
		}
	}},
	{"batch: a request refused earlier in the batch is served again later", open(3, 4, 600), func(t *testing.T,
		b book.Book, aid int64) {
		res := batch(t, b, aid, []domain.ReserveItem{item(1, 4, 1), item(1, 2, 1), item(1, 2, 1), item(2, 2, 2)},
			xerr.SoldOut, "OK", "OK", xerr.SoldOut)
		wantReserved(t, "the request once it fits", res[1], 2, 1, false)
		wantReserved(t, "the request again", res[2], 2, 1, true)
	}},
	{"batch: not started", sale{5, 1, 600, time.Now().Add(time.Hour), time.Now().Add(2 * time.Hour), 0},
		func(t *testing.T, b book.Book, aid int64) {
			batch(t, b, aid, []domain.ReserveItem{item(1, 1, 1), item(0, 1, 2), item(2, 1, 3)},
				xerr.NotStarted, xerr.InvalidArgument, xerr.NotStarted)
		}},
	{"batch: ended, a replay of an order made before the end still answers", sale{5, 2, 600,
		time.Now().Add(-time.Hour), time.Time{}, 3 * time.Second}, func(t *testing.T, b book.Book, aid int64) {
		ended := time.Now().Add(3 * time.Second) // at or after the end the activity was given
		r := reserve(t, b, aid, 1, 1, 1, "OK")
		time.Sleep(time.Until(ended) + 100*time.Millisecond)
		res := batch(t, b, aid, []domain.ReserveItem{item(1, 1, 2), item(1, 1, 1), item(2, 1, 3)},
			xerr.Ended, "OK", xerr.Ended)
		wantReserved(t, "replay after the end", res[1], 1, 4, true)
		if res[1].OrderNo != r.OrderNo {
			t.Fatalf("replay after the end answered %s, want %s", res[1].OrderNo, r.OrderNo)
		}
	}},
	{"concurrent batches take exactly the stock, each buyer within the limit", open(60, 2, 600),
		func(t *testing.T, b book.Book, aid int64) {
			const goroutines, batches, size, buyers = 16, 4, 8, 40
			var mu sync.Mutex
			held := map[int64]int64{} // units answered reserved per buyer (replays not counted)
			orders := map[string]bool{}
			var wg sync.WaitGroup
			start := make(chan struct{})
			for g := range goroutines {
				wg.Go(func() {
					<-start
					for n := range batches {
						items := make([]domain.ReserveItem, size)
						for i := range items {
							k := (g*batches+n)*size + i
							items[i] = item(int64(k%buyers+1), int64(1+k/buyers%2), k)
						}
						res, err := b.ReserveBatch(ctx, aid, items)
						if err != nil {
							t.Errorf("batch %d of goroutine %d: %v", n, g, err)
							return
						}
						mu.Lock()
						for i, r := range res {
							switch c := code(r.Err); {
							case c == "OK" && !r.Replay && !orders[r.OrderNo]:
								orders[r.OrderNo] = true
								held[items[i].UID] += r.Quantity
							case c != xerr.SoldOut && c != xerr.LimitExceeded:
								t.Errorf("item %+v: %s %+v (%v)", items[i], c, r.Reservation, r.Err)
							}
						}
						mu.Unlock()
					}
				})
			}
			close(start)
			wg.Wait()
			var sold int64
			for uid, h := range held {
				if h > 2 {
					t.Errorf("buyer %d holds %d units, the limit is 2", uid, h)
				}
				sold += h
			}
			if sold != 60 {
				t.Fatalf("%d units answered reserved in %d orders, want the stock: 60", sold, len(orders))
			}
			reserve(t, b, aid, buyers+1, 1, 1_000_000, xerr.SoldOut)
		}},
}
