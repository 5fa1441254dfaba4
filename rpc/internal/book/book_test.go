package book_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/book"
)

var ctx = context.Background()

func TestMain(m *testing.M) {
	logx.SetLevel(logx.ErrorLevel) // go-zero logs every SQL statement at info
	os.Exit(m.Run())
}

// sale is the activity a case sells: its stock, per-user limit, pay timeout and window; endsIn,
// when set, moves the end to that long after the activity is created.
type sale struct {
	total, limit, payTimeout int64
	start, end               time.Time
	endsIn                   time.Duration
}

// open is a sale with the window open now.
func open(total, limit, payTimeout int64) sale {
	return sale{total, limit, payTimeout, time.Now().Add(-time.Hour), time.Now().Add(time.Hour), 0}
}

// impl is one Book under test: its activities live in real MariaDB (both books read the activity
// row) and, for the Redis book, in real Redis.
type impl struct {
	name string
	book book.Book
	// place creates the sale for this book and returns its activity id.
	place func(t testing.TB, s sale) int64
	// check fails the test unless the book's counters of activity aid add up to its stock and
	// its locked and sold units are exactly its reserved and paid orders' units.
	check func(t testing.TB, aid int64)
}

// impls builds both books on the test's own database and Redis key prefix.
func impls(t testing.TB) []impl {
	db := testenv.MySQL(t)
	rds, keys := testenv.Redis(t)
	store := stock.NewStore(rds, keys)
	if err := store.LoadScripts(ctx); err != nil {
		t.Fatal(err)
	}
	insert := func(t testing.TB, s sale, mode string) int64 {
		res, err := db.DB.Exec("INSERT INTO activity (sku_id, name, total, start_time, end_time, per_user_limit, "+
			"pay_timeout_seconds) VALUES (7, 'kettle', ?, ?, ?, ?, ?)", s.total, s.start.Unix(), s.end.Unix(),
			s.limit, s.payTimeout)
		if err != nil {
			t.Fatal(err)
		}
		aid, _ := res.LastInsertId()
		if _, err := db.DB.Exec("INSERT INTO inventory (activity_id, available, mode) VALUES (?, ?, ?)",
			aid, s.total, mode); err != nil {
			t.Fatal(err)
		}
		return aid
	}
	conn := book.Conn(db.DSN)
	mysql := &book.MySQL{DB: conn, Inventory: model.NewInventoryModel(conn),
		Orders: model.NewSeckillOrderModel(conn), Activities: model.NewActivityModel(conn), Store: store,
		Concurrency: 64}
	checkMySQL := func(t testing.TB, aid int64) {
		t.Helper()
		b, err := mysql.Inventory.FindCounters(ctx, db.Conn, aid)
		if err != nil {
			t.Fatalf("inventory of %d: %v", aid, err)
		}
		orders, err := mysql.Orders.FindStatesByActivity(ctx, db.Conn, aid)
		if err != nil {
			t.Fatalf("orders of %d: %v", aid, err)
		}
		var reserved, paid uint64
		for _, o := range orders {
			switch o.Status {
			case domain.StateReserved:
				reserved += o.Quantity
			case domain.StatePaid:
				paid += o.Quantity
			}
		}
		if b.Available+b.Locked+b.Sold != b.Total || b.Locked != reserved || b.Sold != paid {
			t.Errorf("MySQL book of %d: %+v, orders hold reserved=%d paid=%d", aid, *b, reserved, paid)
		}
	}
	return []impl{
		{"redis", book.Redis{Store: store}, func(t testing.TB, s sale) int64 {
			aid := insert(t, s, model.ModeRedis)
			if _, _, err := store.Warmup(ctx, domain.Activity{ActivityID: aid, SkuID: 7, Name: "kettle",
				Counters: domain.Counters{Total: s.total, Remaining: s.total}, Start: s.start.Unix(), End: s.end.Unix(),
				Limit: s.limit, PayTimeout: s.payTimeout,
				ExpireAt: s.end.Unix() + 3600}); err != nil {
				t.Fatal(err)
			}
			return aid
		}, func(t testing.TB, aid int64) { (&stocktest.Env{T: t, Store: store}).CheckInvariant(aid) }},
		{"mysql", mysql, func(t testing.TB, s sale) int64 { return insert(t, s, model.ModeMySQL) }, checkMySQL},
	}
}

// code is err's code word ("OK" for nil).
func code(err error) xerr.Code {
	if err == nil {
		return "OK"
	}
	return xerr.CodeOf(err)
}

// want fails the test unless err has the code word w.
func want(t *testing.T, what string, err error, w xerr.Code) {
	t.Helper()
	if c := code(err); c != w {
		t.Fatalf("%s: %s (%v), want %s", what, c, err, w)
	}
}

func rid(n int) string { return fmt.Sprintf("req-%08d", n) }

// reserve reserves qty for uid with request n and wants the code w; it returns the reservation.
func reserve(t *testing.T, b book.Book, aid, uid, qty int64, n int, w xerr.Code) domain.Reservation {
	t.Helper()
	r, err := b.Reserve(ctx, aid, uid, qty, rid(n))
	want(t, fmt.Sprintf("reserve %d by %d (%s)", qty, uid, rid(n)), err, w)
	return r
}

// A contract case runs on a fresh activity of its sale.
type contractCase struct {
	name string
	sale sale
	run  func(t *testing.T, b book.Book, aid int64)
}

// cases is the contract: what every Book answers, one case a fresh activity.
var cases = []contractCase{
	{"a replay returns the order as it is", open(5, 2, 600), func(t *testing.T, b book.Book, aid int64) {
		r := reserve(t, b, aid, 1, 1, 1, "OK")
		if r.Replay || r.State != domain.StateReserved || r.Quantity != 1 || r.Remaining != 4 || r.OrderNo == "" {
			t.Fatalf("first reservation: %+v", r)
		}
		want(t, "pay", b.Confirm(ctx, r.OrderNo, 1), "OK")
		again := reserve(t, b, aid, 1, 1, 1, "OK")
		if !again.Replay || again.OrderNo != r.OrderNo || again.State != domain.StatePaid || again.Remaining != 4 {
			t.Fatalf("replay: %+v, want order %s paid, 4 left", again, r.OrderNo)
		}
	}},
	{"the per-user limit counts reserved and paid orders", open(10, 2, 600), func(t *testing.T, b book.Book,
		aid int64) {
		reserve(t, b, aid, 1, 3, 1, xerr.LimitExceeded)
		first := reserve(t, b, aid, 1, 1, 2, "OK")
		want(t, "pay", b.Confirm(ctx, first.OrderNo, 1), "OK")
		reserve(t, b, aid, 1, 2, 3, xerr.LimitExceeded)
		second := reserve(t, b, aid, 1, 1, 4, "OK")
		reserve(t, b, aid, 1, 1, 5, xerr.LimitExceeded)
		reserve(t, b, aid, 2, 2, 6, "OK") // another buyer has a limit of their own
		want(t, "cancel", b.Release(ctx, second.OrderNo, 1, domain.StateCancelled), "OK")
		reserve(t, b, aid, 1, 1, 7, "OK") // a cancelled order no longer counts
	}},
	{"sold out, never oversold", open(3, 3, 600), func(t *testing.T, b book.Book, aid int64) {
		reserve(t, b, aid, 1, 2, 1, "OK")
		reserve(t, b, aid, 2, 2, 2, xerr.SoldOut)
		if r := reserve(t, b, aid, 2, 1, 3, "OK"); r.Remaining != 0 {
			t.Fatalf("last unit: %d remaining, want 0", r.Remaining)
		}
		reserve(t, b, aid, 3, 1, 4, xerr.SoldOut)
	}},
	{"not started", sale{5, 1, 600, time.Now().Add(time.Hour), time.Now().Add(2 * time.Hour), 0},
		func(t *testing.T, b book.Book, aid int64) { reserve(t, b, aid, 1, 1, 1, xerr.NotStarted) }},
	{"ended", sale{5, 1, 600, time.Now().Add(-2 * time.Hour), time.Now().Add(-time.Minute), 0},
		func(t *testing.T, b book.Book, aid int64) { reserve(t, b, aid, 1, 1, 1, xerr.Ended) }},
	{"pay: again is no error, a paid order cannot be cancelled", open(5, 1, 600), func(t *testing.T, b book.Book,
		aid int64) {
		r := reserve(t, b, aid, 1, 1, 1, "OK")
		want(t, "pay", b.Confirm(ctx, r.OrderNo, 1), "OK")
		want(t, "pay again", b.Confirm(ctx, r.OrderNo, 1), "OK")
		want(t, "cancel a paid order", b.Release(ctx, r.OrderNo, 1, domain.StateCancelled), xerr.OrderPaid)
		want(t, "expire a paid order", b.Release(ctx, r.OrderNo, 1, domain.StateExpired), xerr.OrderPaid)
	}},
	{"cancel: again is no error, the stock comes back, a cancelled order cannot be paid", open(1, 1, 600),
		func(t *testing.T, b book.Book, aid int64) {
			r := reserve(t, b, aid, 1, 1, 1, "OK")
			reserve(t, b, aid, 2, 1, 2, xerr.SoldOut)
			want(t, "cancel", b.Release(ctx, r.OrderNo, 1, domain.StateCancelled), "OK")
			want(t, "cancel again", b.Release(ctx, r.OrderNo, 1, domain.StateCancelled), "OK")
			want(t, "pay a cancelled order", b.Confirm(ctx, r.OrderNo, 1), xerr.OrderClosed)
			reserve(t, b, aid, 2, 1, 3, "OK")
		}},
	{"a storm of sold-outs leaves the book selling", open(1, 1, 600), func(t *testing.T, b book.Book, aid int64) {
		r := reserve(t, b, aid, 1, 1, 1, "OK")
		for i := range 300 {
			reserve(t, b, aid, int64(100+i), 1, 100+i, xerr.SoldOut)
		}
		want(t, "cancel", b.Release(ctx, r.OrderNo, 1, domain.StateCancelled), "OK")
		reserve(t, b, aid, 2, 1, 2, "OK") // not BUSY: no breaker counted the sold-outs as failures
	}},
	{"another user's order is as good as absent", open(5, 1, 600), func(t *testing.T, b book.Book, aid int64) {
		r := reserve(t, b, aid, 1, 1, 1, "OK")
		want(t, "pay by another user", b.Confirm(ctx, r.OrderNo, 2), xerr.OrderNotFound)
		want(t, "cancel by another user", b.Release(ctx, r.OrderNo, 2, domain.StateCancelled), xerr.OrderNotFound)
		want(t, "pay by its owner", b.Confirm(ctx, r.OrderNo, 1), "OK")
	}},
	{"expiry: not before it is due, then once", open(1, 1, 2), func(t *testing.T, b book.Book, aid int64) {
		r := reserve(t, b, aid, 1, 1, 1, "OK")
		want(t, "expire before due", b.Release(ctx, r.OrderNo, 1, domain.StateExpired), xerr.NotDue)
		if done, err := b.ExpireDue(ctx, aid, 10); err != nil || len(done) != 0 {
			t.Fatalf("expire_due before due: %v %v, want nothing", done, err)
		}
		time.Sleep(time.Until(time.UnixMilli(r.ExpireAt)) + 100*time.Millisecond)
		want(t, "pay once due", b.Confirm(ctx, r.OrderNo, 1), xerr.OrderClosed)
		if done, err := b.ExpireDue(ctx, aid, 10); err != nil || !slices.Equal(done, []string{r.OrderNo}) {
			t.Fatalf("expire_due once due: %v %v, want [%s]", done, err, r.OrderNo)
		}
		if done, err := b.ExpireDue(ctx, aid, 10); err != nil || len(done) != 0 {
			t.Fatalf("expire_due again: %v %v, want nothing", done, err)
		}
		want(t, "cancel an expired order", b.Release(ctx, r.OrderNo, 1, domain.StateCancelled), xerr.OrderClosed)
		reserve(t, b, aid, 2, 1, 2, "OK") // the unit came back
	}},
	{"concurrent buyers take exactly the stock", open(5, 1, 600), func(t *testing.T, b book.Book, aid int64) {
		var ok, soldOut atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for uid := range int64(24) {
			wg.Go(func() {
				<-start
				_, err := b.Reserve(ctx, aid, uid+1, 1, rid(int(uid)))
				switch code(err) {
				case "OK":
					ok.Add(1)
				case xerr.SoldOut:
					soldOut.Add(1)
				default:
					t.Errorf("buyer %d: %v", uid+1, err)
				}
			})
		}
		close(start)
		wg.Wait()
		if ok.Load() != 5 || soldOut.Load() != 19 {
			t.Fatalf("24 buyers of 5 units: %d reserved, %d sold out; want 5 and 19", ok.Load(), soldOut.Load())
		}
	}},
	{"one buyer's concurrent requests stay within the limit", open(50, 2, 600), func(t *testing.T, b book.Book,
		aid int64) {
		var ok atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for n := range 12 {
			wg.Go(func() {
				<-start
				_, err := b.Reserve(ctx, aid, 1, 1, rid(n))
				if c := code(err); c == "OK" {
					ok.Add(1)
				} else if c != xerr.LimitExceeded {
					t.Errorf("request %d: %v", n, err)
				}
			})
		}
		close(start)
		wg.Wait()
		if ok.Load() != 2 {
			t.Fatalf("12 requests of one buyer with a limit of 2: %d reserved", ok.Load())
		}
	}},
}

// TestContract runs every case (batch_test.go's included) against both books: the same answers
// from Redis and from MySQL, and each book's counters adding up after every case.
func TestContract(t *testing.T) {
	for _, im := range impls(t) {
		t.Run(im.name, func(t *testing.T) {
			for _, c := range append(append(cases, batchCases...), payCases...) {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					s := c.sale
					if s.endsIn > 0 {
						s.end = time.Now().Add(s.endsIn)
					}
					aid := im.place(t, s)
					c.run(t, im.book, aid)
					im.check(t, aid)
				})
			}
		})
	}
}
