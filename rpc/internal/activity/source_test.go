package activity_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/activity"
)

var ctx = context.Background()

// countingSource counts MySQL reads, slowed a little so that a stampede really overlaps.
type countingSource struct {
	inner activity.Source
	reads atomic.Int64
}

func (c *countingSource) Orders(ctx context.Context, id int64) ([]domain.Order, error) {
	return c.inner.Orders(ctx, id)
}

func (c *countingSource) BumpEpoch(ctx context.Context, id, from int64) error {
	return c.inner.BumpEpoch(ctx, id, from)
}

func (c *countingSource) Load(ctx context.Context, id int64) (*activity.Record, error) {
	c.reads.Add(1)
	time.Sleep(20 * time.Millisecond)
	return c.inner.Load(ctx, id)
}

type fixture struct {
	env    *stocktest.Env
	db     *testenv.Database
	src    *countingSource
	loader *activity.Loader
}

func newFixture(t *testing.T) *fixture {
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	src := &countingSource{inner: activity.NewMySQLSource(model.NewActivityModel(db.Conn),
		model.NewInventoryModel(db.Conn), model.NewSeckillOrderModel(db.Conn))}
	return &fixture{env: env, db: db, src: src, loader: &activity.Loader{Store: env.Store, Source: src,
		Grace: time.Hour, MissingTTL: 5 * time.Second, Wait: 2 * time.Second}}
}

// insert creates an activity in MySQL and returns its id.
func (f *fixture) insert(t *testing.T, stockQty int64, start, end time.Time) int64 {
	t.Helper()
	res, err := f.db.DB.Exec(
		"INSERT INTO activity (sku_id, name, total, start_time, end_time, per_user_limit, pay_timeout_seconds) VALUES (9, "+
			"'phone', ?, ?, ?, 2, 60)",
		stockQty,
		start.Unix(),
		end.Unix(),
	)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.LastInsertId()
	if _, err := f.db.DB.Exec("INSERT INTO inventory (activity_id, available) VALUES (?, ?)", id, stockQty); err != nil {
		t.Fatal(err)
	}
	return id
}

func stampede(n int, fn func()) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); <-start; fn() }()
	}
	close(start)
	wg.Wait()
}

func TestColdStampedeReadsMySQLOnce(t *testing.T) {
	f := newFixture(t)
	id := f.insert(t, 100, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	var ok, busy atomic.Int64
	stampede(200, func() {
		snap, err := f.loader.Stock(ctx, id)
		switch {
		case err == nil && snap.Remaining == 100 && snap.Total == 100 && snap.Name == "phone":
			ok.Add(1)
		case xerr.CodeOf(err) == xerr.Busy:
			busy.Add(1)
		default:
			t.Errorf("stock: %+v %v", snap, err)
		}
	})
	if got := f.src.reads.Load(); got != 1 {
		t.Fatalf("%d MySQL reads for 200 concurrent cold reads, want 1", got)
	}
	if ok.Load() != 200 {
		t.Fatalf("%d served, %d busy; want all 200 served", ok.Load(), busy.Load())
	}
	f.env.CheckInvariant(id)
	// The backfill warmed it and marked it active.
	ids, _ := f.env.Store.Active(ctx, 0, math.MaxInt64)
	if _, ok := ids[id]; len(ids) != 1 || !ok {
		t.Fatalf("active %v", ids)
	}
}

func TestUnknownActivityIsCachedAsMissing(t *testing.T) {
	f := newFixture(t)
	var notFound atomic.Int64
	stampede(200, func() {
		if _, err := f.loader.Stock(ctx, 987654); xerr.CodeOf(err) == xerr.ActivityNotFound {
			notFound.Add(1)
		} else {
			t.Errorf("want not found, got %v", err)
		}
	})
	if got := f.src.reads.Load(); got > 1 {
		t.Fatalf("%d MySQL reads for an unknown id, want at most 1", got)
	}
	if notFound.Load() != 200 {
		t.Fatalf("%d not found", notFound.Load())
	}
	// And later reads stay off MySQL while the missing flag lives.
	for i := 0; i < 10; i++ {
		_, _ = f.loader.Stock(ctx, 987654)
	}
	if got := f.src.reads.Load(); got > 1 {
		t.Fatalf("%d MySQL reads after the missing flag", got)
	}
	if ok, _ := f.env.Store.Missing(ctx, 987654); !ok {
		t.Fatal("no missing flag")
	}
}

func TestWarmup(t *testing.T) {
	f := newFixture(t)
	end := time.Now().Add(time.Hour)
	id := f.insert(t, 50, time.Now().Add(time.Minute), end)
	created, snap, err := f.loader.Warmup(ctx, id)
	if err != nil || !created || snap.Remaining != 50 || snap.Limit != 2 || snap.PayTimeout != 60 {
		t.Fatalf("warmup: %v %+v %v", created, snap, err)
	}
	if _, _, err := f.env.Store.Adjust(ctx, id, -10, "", ""); err != nil {
		t.Fatal(err)
	}
	created, snap, err = f.loader.Warmup(ctx, id)
	if err != nil || created || snap.Remaining != 40 {
		t.Fatalf("second warmup overwrote live stock: %v %+v %v", created, snap, err)
	}
	ttl, _ := f.env.Redis.Ttl(f.env.Keys.Stock(id))
	if want := int(time.Until(end.Add(time.Minute + time.Hour)).Seconds()); ttl < want-5 || ttl > want+5 {
		t.Fatalf("ttl %d, want about %d (end + pay timeout + grace)", ttl, want)
	}

	ended := f.insert(t, 5, time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour))
	if _, _, err := f.loader.Warmup(ctx, ended); xerr.CodeOf(err) != xerr.Ended {
		t.Fatalf("ended: %v", err)
	}
	if _, _, err := f.loader.Warmup(ctx, 424242); xerr.CodeOf(err) != xerr.ActivityNotFound {
		t.Fatalf("unknown: %v", err)
	}
	// A read of an ended activity is served from a short-lived copy, not marked active.
	snap, err = f.loader.Stock(ctx, ended)
	if err != nil || snap.Remaining != 5 {
		t.Fatalf("ended read: %+v %v", snap, err)
	}
	if _, err := stocktest.Reserve(ctx, f.env.Store, ended, 1, 1, "req-ended-1"); xerr.CodeOf(err) != xerr.Ended {
		t.Fatalf("reserve on ended: %v", err)
	}
	ids, _ := f.env.Store.Active(ctx, 0, math.MaxInt64)
	if _, ok := ids[id]; len(ids) != 1 || !ok {
		t.Fatalf("active %v, want only %d", ids, id)
	}
}

// Redis failing is no miss: a call that cannot reach Redis answers BUSY without reading
// MySQL or starting a rebuild, so it never moves the epoch (a bumped epoch under a live
// stock hash would make the writer drop that hash's changes). It used to: every BUSY error
// "was" stock.ErrNotWarm (xerr.Error.Is compared codes through the target's wrapping).
func TestRedisDownIsNoMiss(t *testing.T) {
	f := newFixture(t)
	now := time.Now()
	id := f.insert(t, 10, now.Add(-time.Minute), now.Add(time.Hour))
	if _, err := f.db.DB.Exec("UPDATE inventory SET epoch = 1 WHERE activity_id = ?", id); err != nil {
		t.Fatal(err)
	}
	dead := redis.New("127.0.0.1:1") // nothing listens there
	loader := &activity.Loader{Store: stock.NewStore(dead, f.env.Keys), Source: f.src,
		Grace: time.Hour, MissingTTL: 5 * time.Second, Wait: 2 * time.Second}
	for range 5 {
		if _, err := loader.Stock(ctx, id); xerr.CodeOf(err) != xerr.Busy || errors.Is(err, stock.ErrNotWarm) {
			t.Fatalf("Redis down: %v, want BUSY and not a miss", err)
		}
	}
	if n := f.src.reads.Load(); n != 0 {
		t.Fatalf("%d MySQL reads with Redis down, want 0", n)
	}
	var epoch int64
	if err := f.db.DB.QueryRow("SELECT epoch FROM inventory WHERE activity_id = ?", id).Scan(&epoch); err != nil ||
		epoch != 1 {
		t.Fatalf("epoch %d %v, want 1 (unmoved)", epoch, err)
	}
	if !errors.Is(fmt.Errorf("wrapped: %w", stock.ErrNotWarm), stock.ErrNotWarm) ||
		xerr.CodeOf(stock.ErrNotWarm) != xerr.Busy {
		t.Fatal("ErrNotWarm must still match itself and be BUSY")
	}
}

// stallingSource stalls Orders (read after the rebuild's epoch bump) until released.
type stallingSource struct {
	activity.Source
	in, release chan struct{}
}

func (s *stallingSource) Orders(ctx context.Context, id int64) ([]domain.Order, error) {
	s.in <- struct{}{}
	<-s.release
	return s.Source.Orders(ctx, id)
}

// A rebuilder that stalls between its epoch bump and its stock hash write past its
// lock's lease, while a second one (on another instance) takes the lock and bumps again,
// must not write a stock hash one epoch behind MySQL (the writer would drop every change
// it acknowledges). Here the first wakes while the second is itself between its bump and
// its write: without the epoch claim the first writes a hash of epoch 2 while MySQL is at 3.
func TestStalledRebuilderIsRefused(t *testing.T) {
	f := newFixture(t)
	now := time.Now()
	id := f.insert(t, 10, now.Add(-time.Minute), now.Add(time.Hour))
	if _, _, err := f.loader.Warmup(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.DB.Exec("UPDATE inventory SET epoch = 1 WHERE activity_id = ?", id); err != nil {
		t.Fatal(err)
	}
	if _, err := f.env.Redis.Del(f.env.Keys.Stock(id)); err != nil { // the loss
		t.Fatal(err)
	}
	instance := func() (*activity.Loader, *stallingSource) {
		s := &stallingSource{Source: f.src, in: make(chan struct{}), release: make(chan struct{})}
		// A long lease: the test, not the renewal, decides when a lease is lost.
		return &activity.Loader{Store: f.env.Store, Source: s, Grace: time.Hour, MissingTTL: 5 * time.Second,
			Wait: 30 * time.Second, Lease: time.Minute}, s
	}
	a, sa := instance()
	b, sb := instance()
	results := make(chan error, 2)
	go func() { _, err := a.Stock(ctx, id); results <- err }()
	<-sa.in // A bumped the epoch to 2 and stalls
	// A's lease lapses.
	if _, err := f.env.Redis.Del(backfillLease(f.env.Keys, id)); err != nil {
		t.Fatal(err)
	}
	go func() { _, err := b.Stock(ctx, id); results <- err }()
	<-sb.in // B bumped to 3 and stalls too
	close(sa.release)
	errA := <-results
	close(sb.release)
	errB := <-results
	var epoch int64
	if err := f.db.DB.QueryRow("SELECT epoch FROM inventory WHERE activity_id = ?", id).Scan(&epoch); err != nil {
		t.Fatal(err)
	}
	snap, err := f.env.Store.Stock(ctx, id)
	if err != nil || snap.Epoch != epoch || epoch != 3 {
		t.Fatalf("stock hash %+v (%v), MySQL epoch %d; want both 3 (A: %v, B: %v)", snap, err, epoch, errA, errB)
	}
	if xerr.CodeOf(errA) != xerr.Busy || errB != nil {
		t.Fatalf("the stalled rebuild answered %v (want BUSY), the second %v (want nil)", errA, errB)
	}
}

// The backfill's lease keeps the key an earlier version's instances take (a rolling upgrade
// shares it), and the API's tests hold: sk:{a<ID>}:lock.
func TestBackfillLockKeepsItsKeyName(t *testing.T) {
	e := stocktest.New(t)
	held, err := e.Store.Lock(7, "").AcquireCtx(context.Background())
	if n, _ := e.Redis.Exists(backfillLease(e.Keys, 7)); !held || err != nil || !n {
		t.Errorf("the backfill lease (%v, %v) is not at sk:{a7}:lock", held, err)
	}
}

// backfillLease is the key of activity id's backfill lease (Store.Lock(id, "")), as the pin
// above spells it.
func backfillLease(k stock.Keys, id int64) string {
	return fmt.Sprintf("%ssk:{a%d}:lock", k.Prefix, id)
}
