package pipelinetest_test

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	red "github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/pipelinetest"
	"github.com/seckill/seckill/devkit/rpctest"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/inventoryclient"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// booked is one sale of a book: when it sold (Redis: a point by Redis's clock; MySQL: the call's interval).
type booked struct {
	mysql        bool
	began, ended time.Time
}

func stamp(t time.Time) string { return t.Format(time.StampMicro) }

// made is a call that made a new order of the log's activity, timed by the test's clock around it.
type made struct {
	orderNo      string
	began, ended time.Time
}

// saleLog records the calls through its instances that made a new order of one activity.
type saleLog struct {
	aid   int64
	mu    sync.Mutex
	sales []made
}

// timed is an instance's client whose new reservations of the log's activity are recorded.
type timed struct {
	inventoryclient.Inventory
	log *saleLog
}

func (c timed) Reserve(ctx context.Context, in *inventoryclient.ReserveReq,
	opts ...grpc.CallOption) (*inventoryclient.ReserveResp, error) {
	began := time.Now()
	r, err := c.Inventory.Reserve(ctx, in, opts...)
	if err == nil && !r.Replay && in.ActivityId == c.log.aid {
		c.log.mu.Lock()
		c.log.sales = append(c.log.sales, made{r.OrderNo, began, time.Now()})
		c.log.mu.Unlock()
	}
	return r, err
}

// books returns every sale of the activity by book: the Redis book's from its events on Kafka, the
// MySQL book's as the calls that made an order no Redis event names; and the orders of each book.
func (l *saleLog) books(p *pipelinetest.Pipeline) (sales []booked, byBook map[string]bool) {
	redis := p.RedisSales(l.aid)
	byBook = map[string]bool{}
	for no, at := range redis {
		sales = append(sales, booked{false, at, at})
		byBook[no] = false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.sales {
		if _, ok := redis[s.orderNo]; !ok {
			sales = append(sales, booked{true, s.began, s.ended})
			byBook[s.orderNo] = true
		}
	}
	return sales, byBook
}

// secondInstance starts instance B of the pipeline's inventory service with conf, its
// Redis reached through a proxy the test can cut; both instances' clients record their sales of aid.
func secondInstance(t *testing.T, p *pipelinetest.Pipeline, aid int64,
	conf func(*rpcserver.Config)) (invA, invB inventoryclient.Inventory, proxy *devenv.Proxy, log *saleLog) {
	t.Helper()
	proxy, err := devenv.StartProxy(p.Redis.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	cb := rpctest.Config(t, p.Keys, p.DB.DSN)
	cb.StockRedis.Host = proxy.Addr
	cb.Relay = p.RPC.Relay
	cb.Reconcile = p.RPC.Reconcile
	cb.Stock = p.RPC.Stock
	conf(&cb)
	b, _ := rpctest.Start(t, cb)
	log = &saleLog{aid: aid}
	return timed{p.Inv, log}, timed{b, log}, proxy, log
}

// TestDegradeFenceTwoInstances: instance A sees Redis, instance B reaches it through a
// cut proxy. Buyers on both: B's Redis failures switch the activity to MySQL; A stops
// selling from Redis within its lease; the fence never lets the two books sell in the
// same window (every reservation's call interval, per book: no Redis one overlaps a MySQL
// one), and exactly the stock is sold (the switches flap: A hands the activity back to
// Redis whenever it sees Redis, B's failures switch it to MySQL again).
func TestDegradeFenceTwoInstances(t *testing.T) {
	const total = 300
	p := pipelinetest.Start(t, pipelinetest.Options{Inventory: degradeOn})
	now := time.Now()
	aid := p.Activity(total, 1, 600, now.Add(-time.Minute), now.Add(time.Hour))

	invA, invB, proxy, log := secondInstance(t, p, aid, degradeOn)

	proxy.Cut()
	var wg sync.WaitGroup
	var ok, soldOut int
	orders := map[int64]string{}
	var omu sync.Mutex
	for i, inv := range []inventoryclient.Inventory{invA, invB} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Waves of buyers over a few seconds, so both books get their turn.
			for w := range 10 {
				o, so := buyers(t, inv, aid, "f", uids(int64(100000*(i+1)+w*20), 20))
				omu.Lock()
				ok, soldOut = ok+len(o), soldOut+so
				maps.Copy(orders, o)
				omu.Unlock()
				time.Sleep(300 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	sales, byBook := log.books(p)
	var byRedis, byMySQL int
	for _, s := range sales {
		if s.mysql {
			byMySQL++
		} else {
			byRedis++
		}
	}
	t.Logf("sold %d (redis book %d, mysql book %d), sold out %d", ok, byRedis, byMySQL, soldOut)
	if byMySQL == 0 {
		t.Fatal("the MySQL book never sold: the instance without Redis did not degrade")
	}
	for _, r := range sales {
		if r.mysql {
			continue
		}
		for _, m := range sales {
			if m.mysql && r.began.Before(m.ended) && m.began.Before(r.ended) {
				t.Fatalf("both books sold in the same window: redis %v..%v, mysql %v..%v",
					stamp(r.began), stamp(r.ended), stamp(m.began), stamp(m.ended))
			}
		}
	}
	// Exactly the stock sold, and each buyer's order made by a book the checks above saw sell it.
	if ok != total {
		t.Fatalf("%d sold, want exactly %d (oversold %d)", ok, total, ok-total)
	}
	for uid, no := range orders {
		if _, seen := byBook[no]; !seen {
			t.Fatalf("buyer %d's order %s: neither a Redis event nor a MySQL sale seen", uid, no)
		}
	}
	// Not checked here: the hand-back to Redis once B sees Redis again (it is in
	// TestDegradeModeRedisDownMidSale); with the two instances flapping between the books
	// it can stall (open, see the branch's report).
}

// TestDegradeFenceWaitsOutTheLease: the 2L wait is what keeps the books apart. Instance A
// sees Redis; instance B's Redis address refuses connections. A renews its lease (a Redis
// sale), and B's next call, failing on Redis, switches the activity to MySQL at once. A
// keeps selling from Redis on its lease, up to L after it renewed it; B may sell from MySQL
// only 2L after it saw the switch. RelayMarginMs is 0 (B does not wait for a relay it
// cannot see) and nobody hands the activity back (RecoverMs is long), so the lease wait
// alone separates the books: every Redis sale must have ended before the first MySQL sale
// began. Without the wait, B sells from MySQL while A still sells from Redis, and this test
// fails.
func TestDegradeFenceWaitsOutTheLease(t *testing.T) {
	f := fenceScenario(t, 3*time.Second, nil)
	if f.redisAfterSwitch == 0 {
		t.Fatal("A sold nothing from Redis after the switch: the lease window was not exercised")
	}
}

// TestDegradeFenceRedisWriteStall: as TestDegradeFenceWaitsOutTheLease (L 1 s), and right
// after the switch Redis stalls its writes for 2.5 s (CLIENT PAUSE WRITE, as a failover
// does). A's reservations sent inside its lease wait in Redis and run after the pause:
// past A's lease, and past the 2L after which B sells from MySQL (their buyers were told
// DeadlineExceeded at the service's 2 s Timeout, but the handlers go on). The reserve
// script checks the lease's end (its sell-by, by Redis's clock) and sells nothing then
// (stock.ErrLeaseLapsed, BUSY). Without that check the delayed reservations sold from
// Redis while MySQL sold (measured: Redis sales ending 0.55-0.59 s after the first MySQL
// sale began; sales whose buyers had been told to retry).
func TestDegradeFenceRedisWriteStall(t *testing.T) {
	f := fenceScenario(t, time.Second, func(p *pipelinetest.Pipeline) {
		c := red.NewClient(&red.Options{Addr: p.Redis.Addr})
		defer c.Close()
		if err := c.Do(ctx, "CLIENT", "PAUSE", 2500, "WRITE").Err(); err != nil {
			t.Fatal(err)
		}
	})
	if f.stuck == 0 {
		t.Fatal("no reservation of A reached Redis during the stall: the stall was not exercised")
	}
}

// fenceResult is what a fence scenario saw besides its own checks.
type fenceResult struct {
	redisAfterSwitch int // Redis sales that began after the switch (A on its lease)
	stuck            int // reservations answered past their sell-by or timed out
}

// fenceScenario is the two-instance lease scenario of TestDegradeFenceWaitsOutTheLease
// with lease L; stall, when set, runs right after the switch. It fails the test when both
// books sold at once or MySQL never sold.
func fenceScenario(t *testing.T, lease time.Duration, stall func(p *pipelinetest.Pipeline)) fenceResult {
	t.Helper()
	conf := func(c *rpcserver.Config) {
		degradeOn(c)
		c.DegradeMode.LeaseMs = int(lease / time.Millisecond)
		c.DegradeMode.RelayMarginMs = 0
		c.DegradeMode.RecoverMs = 60000
	}
	p := pipelinetest.Start(t, pipelinetest.Options{Inventory: conf})
	now := time.Now()
	aid := p.Activity(1_000_000, 1, 600, now.Add(-time.Minute), now.Add(time.Hour))

	invA, invB, proxy, log := secondInstance(t, p, aid, conf)

	var next atomic.Int64
	next.Store(1000)
	reserve := func(inv inventoryclient.Inventory, uid int64) error {
		req := &inventoryclient.ReserveReq{ActivityId: aid, Uid: uid, Quantity: 1, RequestId: rid(uid, "lease")}
		_, err := inv.Reserve(ctx, req)
		return err
	}
	// The activity warm in Redis (A's first sale backfills it); then A's lease goes stale
	// and A renews it with one more sale, just before B's failure switches the activity.
	warm := func() (struct{}, error) { return struct{}{}, reserve(invA, next.Add(1)) }
	if _, err := pipelinetest.Retry(t, 30*time.Second, warm); err != nil {
		t.Fatalf("warm-up sale: %v", err)
	}
	_ = proxy.Close() // B's Redis address refuses connections from now on
	// B learns that its Redis is gone (Ping: no switch) until its Redis calls fail fast
	// (go-redis redials and retries for up to about 2 s before that), so that its switch
	// follows A's renewal closely.
	awaitFastFailures(t, invB)
	time.Sleep(lease + 100*time.Millisecond)
	if err := reserve(invA, next.Add(1)); err != nil {
		t.Fatalf("A's lease renewal sale: %v", err)
	}
	renewed := time.Now()
	berr := reserve(invB, next.Add(1))
	if xerr.FromStatus(berr).Code != xerr.Busy {
		t.Fatalf("B's first call with Redis unreachable: %v, want BUSY (the switch)", berr)
	}
	switchedAt := time.Now()
	if m := mode(t, p, aid); m != "mysql" {
		t.Fatalf("mode %s after B's Redis failure, want mysql", m)
	}
	if stall != nil {
		stall(p)
	}

	// stuck: reservations answered past their sell-by, or not answered in time (the
	// service's Timeout: its handler, still waiting on Redis, goes on and its script runs
	// when Redis serves it).
	var stuck atomic.Int64
	// Buyers on both instances until MySQL has sold for a while: A on its lease, then (like
	// B) through MySQL.
	stop := switchedAt.Add(2*lease + 1500*time.Millisecond)
	fenceBuyers(t, []inventoryclient.Inventory{invA, invB}, reserve, &next, &stuck, stop)

	sales, _ := log.books(p)
	lastRedis, firstMySQL, redisAfterSwitch, byMySQL := splitSales(sales, switchedAt)
	t.Logf(
		"the switch %v after A renewed its lease; %d sales: %d by Redis after the switch (A on its lease), %d by MySQL; "+
			"%d answered past their sell-by or timed out; the last Redis sale ended %v after the switch, "+
			"the first MySQL sale began %v after it",
		switchedAt.Sub(renewed).Round(time.Millisecond), len(sales), redisAfterSwitch, byMySQL, stuck.Load(),
		lastRedis.ended.Sub(switchedAt).Round(time.Millisecond), firstMySQL.began.Sub(switchedAt).Round(time.Millisecond))
	if byMySQL == 0 {
		t.Fatal("the MySQL book never sold")
	}
	if !lastRedis.ended.Before(firstMySQL.began) {
		t.Fatalf("both books sold at once: a Redis sale %v..%v, a MySQL sale from %v (%v before the Redis one ended)",
			stamp(lastRedis.began), stamp(lastRedis.ended), stamp(firstMySQL.began),
			lastRedis.ended.Sub(firstMySQL.began).Round(time.Millisecond))
	}
	return fenceResult{redisAfterSwitch: redisAfterSwitch, stuck: int(stuck.Load())}
}

// awaitFastFailures pings B until it learns that its Redis is gone (Ping: no switch) and
// its Redis calls fail fast (go-redis redials and retries for up to about 2 s before that).
func awaitFastFailures(t *testing.T, invB inventoryclient.Inventory) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for fast := 0; fast < 3; {
		began := time.Now()
		r, err := invB.Ping(ctx, &inventoryclient.PingReq{})
		if err == nil && r.RedisDown && time.Since(began) < 50*time.Millisecond {
			fast++
		}
		if time.Now().After(deadline) {
			t.Fatalf("B's Redis calls still slow to fail after 20 s (last ping %v, %v)", r, err)
		}
	}
}

// fenceBuyers runs six buyers on each instance until stop, each retrying a BUSY with the
// same request id; stuck counts the answers past their sell-by and the timeouts.
func fenceBuyers(t *testing.T, invs []inventoryclient.Inventory, reserve func(inventoryclient.Inventory, int64) error,
	next, stuck *atomic.Int64, stop time.Time) {
	var wg sync.WaitGroup
	for _, inv := range invs {
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(stop) {
					uid := next.Add(1)
					for time.Now().Before(stop) {
						err := reserve(inv, uid)
						if err == nil {
							break
						}
						c := xerr.FromStatus(err)
						if c.Code != xerr.Busy {
							t.Errorf("buyer %d: %v", uid, err)
							return
						}
						if c == stock.ErrLeaseLapsed || status.Code(err) == codes.DeadlineExceeded {
							stuck.Add(1)
						}
						time.Sleep(10 * time.Millisecond) // BUSY: the same request id again
					}
				}
			}()
		}
	}
	wg.Wait()
}

// splitSales finds the last Redis sale, the first MySQL sale, the Redis sales begun after
// the switch and the MySQL sales.
func splitSales(sales []booked, switchedAt time.Time) (lastRedis, firstMySQL booked, redisAfterSwitch, byMySQL int) {
	for _, s := range sales {
		switch {
		case s.mysql:
			byMySQL++
			if firstMySQL.began.IsZero() || s.began.Before(firstMySQL.began) {
				firstMySQL = s
			}
		default:
			if s.began.After(switchedAt) {
				redisAfterSwitch++
			}
			if s.ended.After(lastRedis.ended) {
				lastRedis = s
			}
		}
	}
	return lastRedis, firstMySQL, redisAfterSwitch, byMySQL
}
