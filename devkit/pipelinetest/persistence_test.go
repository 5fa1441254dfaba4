package pipelinetest_test

import (
	red "github.com/redis/go-redis/v9"
	"github.com/seckill/seckill/rpc/rpcserver"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/pipelinetest"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

type ack struct {
	orderNo string
	uid     int64
	at      time.Time
}

// saleUntilKill runs buyers against the inventory service, kills Redis (SIGKILL) after
// d, and returns every acknowledged reservation with the kill time.
func saleUntilKill(t *testing.T, p *pipelinetest.Pipeline, aid int64, d time.Duration) ([]ack, time.Time) {
	var mu sync.Mutex
	var acks []ack
	var stop atomic.Bool
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				uid := next.Add(1)
				r, err := p.Inv.Reserve(
					ctx,
					&inventoryclient.ReserveReq{ActivityId: aid, Uid: uid, Quantity: 1, RequestId: rid(uid, "k")},
				)
				if err == nil {
					mu.Lock()
					acks = append(acks, ack{r.OrderNo, uid, time.Now()})
					mu.Unlock()
				}
			}
		}()
	}
	// At least d, and enough acknowledgements to measure (a loaded machine may take longer).
	time.Sleep(d)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		mu.Lock()
		n := len(acks)
		mu.Unlock()
		if n >= 150 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.Redis.Kill()
	killed := time.Now()
	time.Sleep(100 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	return acks, killed
}

// lostAfterRestart restarts Redis on the killed server's directory and returns the
// acknowledged reservations the system no longer knows (neither Redis, after a rebuild
// where Redis came back empty, nor MySQL).
func lostAfterRestart(t *testing.T, p *pipelinetest.Pipeline, persist devenv.Persistence, acks []ack) []ack {
	restarted, err := devenv.StartRedisOn(ctx, p.Redis, persist)
	if err != nil {
		t.Fatal(err)
	}
	p.Redis = restarted
	var lost []ack
	for _, a := range acks {
		_, err := pipelinetest.Retry(t, 60*time.Second, func() (*inventoryclient.GetOrderResp, error) {
			return p.Inv.GetOrder(ctx, &inventoryclient.OrderReq{OrderNo: a.orderNo, Uid: a.uid})
		})
		switch c := xerr.FromStatus(err); {
		case err == nil:
		case c.Code == xerr.OrderNotFound:
			lost = append(lost, a)
		default:
			t.Fatalf("order %s after the restart: %v", a.orderNo, err)
		}
	}
	return lost
}

// TestPersistenceLossOnKill measures, per Redis persistence setting, what a kill -9 of
// Redis mid-sale costs: acknowledged reservations the system no longer has once Redis is
// back (restarted on the same directory; with no persistence it comes back empty and the
// activity is rebuilt from MySQL, so what is lost is what had not reached Kafka). It
// asserts the bound of each setting: with an AOF, nothing acknowledged more than one
// fsync interval (1 s) before the kill is lost, and with appendfsync always nothing at all.
func TestPersistenceLossOnKill(t *testing.T) {
	for _, persist := range []devenv.Persistence{devenv.PersistNone, devenv.PersistNo, devenv.PersistEverysec,
		devenv.PersistAlways} {
		t.Run(string(persist), func(t *testing.T) {
			p := pipelinetest.Start(t, pipelinetest.Options{Persistence: persist})
			now := time.Now()
			aid := p.Activity(1_000_000, 1, 600, now.Add(-time.Minute), now.Add(time.Hour))
			acks, killed := saleUntilKill(t, p, aid, 1500*time.Millisecond)
			if len(acks) < 100 {
				t.Fatalf("only %d reservations before the kill", len(acks))
			}
			lost := lostAfterRestart(t, p, persist, acks)
			sort.Slice(lost, func(i, j int) bool { return lost[i].at.Before(lost[j].at) })
			oldest := time.Duration(0)
			if len(lost) > 0 {
				oldest = killed.Sub(lost[0].at)
			}
			t.Logf(
				"persistence %s: %d reservations acknowledged in %v, %d lost after kill -9 and restart (oldest lost "+
					"acknowledged %v before the kill)",
				persist,
				len(acks),
				1500*time.Millisecond,
				len(lost),
				oldest.Round(time.Millisecond),
			)
			switch persist {
			case devenv.PersistAlways:
				if len(lost) > 0 {
					t.Fatalf("appendfsync always lost %d acknowledged reservations", len(lost))
				}
			case devenv.PersistEverysec, devenv.PersistNo:
				if oldest > time.Second+200*time.Millisecond {
					t.Fatalf("appendfsync %s lost a reservation acknowledged %v before the kill", persist, oldest)
				}
			}
			// Whatever was lost, the books agree again and the stock adds up.
			if _, err := pipelinetest.Retry(t, 30*time.Second, func() (*inventoryclient.ReserveResp, error) {
				return p.Inv.Reserve(ctx, &inventoryclient.ReserveReq{ActivityId: aid, Uid: 1 << 40, Quantity: 1,
					RequestId: rid(1, "after")})
			}); err != nil {
				t.Fatalf("selling after the restart: %v", err)
			}
			// A rebuild may still run (the Acker rebuilds a hash back behind what it acknowledged): BUSY meanwhile.
			snap, err := pipelinetest.Retry(t, 30*time.Second, func() (domain.Activity, error) {
				return p.Store.Stock(ctx, aid)
			})
			if err != nil || snap.Remaining+snap.Locked+snap.Sold != snap.Total {
				t.Fatalf("stock after the restart: %+v %v", snap, err)
			}
		})
	}
}

// code is the gateway's classification of a zRPC error (xerr.FromStatus: a status by its
// code word, a call that got no answer, the client breaker open included, as BUSY).
func code(err error) xerr.Code {
	if err == nil {
		return ""
	}
	return xerr.FromStatus(err).Code
}

// TestRedisDownAnswersBusy: with Redis stopped under a running inventory service every
// route answers BUSY (503), none INTERNAL (500) or INVALID_ARGUMENT (400); once Redis is
// back, answers recover.
func TestRedisDownAnswersBusy(t *testing.T) {
	p := pipelinetest.Start(t, pipelinetest.Options{})
	now := time.Now()
	aid := p.Activity(100, 1, 600, now.Add(-time.Minute), now.Add(time.Hour))
	r, err := p.Inv.Reserve(
		ctx,
		&inventoryclient.ReserveReq{ActivityId: aid, Uid: 1, Quantity: 1, RequestId: rid(1, "down")},
	)
	if err != nil {
		t.Fatal(err)
	}
	p.Redis.Kill()
	calls := map[string]func(i int) error{
		"reserve": func(i int) error {
			uid := int64(100 + i)
			req := &inventoryclient.ReserveReq{ActivityId: aid, Uid: uid, Quantity: 1, RequestId: rid(uid, "down")}
			_, err := p.Inv.Reserve(ctx, req)
			return err
		},
		"pay": func(int) error {
			_, err := p.Inv.Confirm(ctx, &inventoryclient.OrderReq{OrderNo: r.OrderNo, Uid: 1})
			return err
		},
		"cancel": func(int) error {
			_, err := p.Inv.Release(ctx, &inventoryclient.OrderReq{OrderNo: r.OrderNo, Uid: 1})
			return err
		},
		"stock": func(int) error {
			_, err := p.Inv.GetStock(ctx, &inventoryclient.GetStockReq{ActivityId: aid})
			return err
		},
		"order": func(int) error {
			_, err := p.Inv.GetOrder(ctx, &inventoryclient.OrderReq{OrderNo: r.OrderNo, Uid: 1})
			return err
		},
		"expire": func(int) error {
			_, err := p.Inv.ExpireDue(ctx, &inventoryclient.ExpireDueReq{ActivityId: aid})
			return err
		},
	}
	counts := map[xerr.Code]int{}
	for i := range 20 {
		for name, call := range calls {
			c := code(call(i))
			counts[c]++
			if c != xerr.Busy {
				t.Errorf("%s with Redis down: %q, want BUSY", name, c)
			}
		}
	}
	t.Logf("Redis down: %v", counts)
	restarted, err := devenv.StartRedisOn(ctx, p.Redis, devenv.PersistEverysec)
	if err != nil {
		t.Fatal(err)
	}
	p.Redis = restarted
	awaitReservations(t, p, aid)
	// The breaker drops a share of calls until its window holds successes only: the pay
	// gets the same bound as the reservations above (10 s was too short on loaded cores).
	if _, err := pipelinetest.Retry(t, 60*time.Second, func() (*inventoryclient.OrderStateResp, error) {
		return p.Inv.Confirm(ctx, &inventoryclient.OrderReq{OrderNo: r.OrderNo, Uid: 1})
	}); err != nil {
		_, direct := p.Store.Confirm(ctx, r.OrderNo, 1)
		t.Logf("direct: %v", direct)
		t.Fatalf("pay after Redis came back: %v; %s", err, p.Books(aid))
	}
}

// awaitReservations waits until a reservation succeeds again after Redis came back: go-zero's
// Redis breaker saw every call fail while Redis was down (the relay's and the jobs' too); it
// lets calls through again as its 10 s window fills with successes, which on loaded cores has
// taken over 30 s. Every answer until then must be BUSY; a failure lists each one seen.
func awaitReservations(t *testing.T, p *pipelinetest.Pipeline, aid int64) {
	t.Helper()
	start := time.Now()
	_, err := pipelinetest.Retry(t, 60*time.Second, func() (*inventoryclient.ReserveResp, error) {
		return p.Inv.Reserve(ctx, &inventoryclient.ReserveReq{ActivityId: aid, Uid: 2, Quantity: 1,
			RequestId: rid(2, "back")})
	})
	if err != nil {
		t.Fatalf("reserve after Redis came back: %v (%s), want success after BUSY; %s", err, code(err), p.Books(aid))
	}
	t.Logf("reservations back %s after Redis", time.Since(start).Round(time.Millisecond))
}

// TestScriptsReloadedAfterTheCacheIsLost: a Redis back from a restart or a failover has
// no script cache; the inventory service's Redis probe loads every script again, so a
// script call never depends on its NOSCRIPT fallback passing an open breaker.
func TestScriptsReloadedAfterTheCacheIsLost(t *testing.T) {
	scriptsReloaded(t, false)
}

// TestScriptsReloadedWhileTheBreakerIsOpen: the probe reloads the scripts while go-zero's
// Redis breaker drops nearly every call of the service (here: calls failing without end).
// Through the breaker, its PING and SCRIPT LOADs were dropped with the rest; while scripts
// were missing every script call failed with NOSCRIPT and kept the breaker open, and a
// Redis restarted under load left reservations BUSY for over 60 s (36 s in a passing run).
func TestScriptsReloadedWhileTheBreakerIsOpen(t *testing.T) {
	scriptsReloaded(t, true)
}

// scriptsReloaded flushes the script cache of a pipeline's Redis (probing every 200 ms) and
// waits up to 10 s for the probe to load every script again; with failing, while the
// service's Redis client fails calls without end.
func scriptsReloaded(t *testing.T, failing bool) {
	p := pipelinetest.Start(t, pipelinetest.Options{Inventory: func(c *rpcserver.Config) {
		c.Probe.Interval = 200 * time.Millisecond
	}})
	c := red.NewClient(&red.Options{Addr: p.Redis.Addr})
	defer c.Close()
	cached := func() int {
		info, err := c.Info(ctx, "memory").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "number_of_cached_scripts:"); ok {
				n, _ := strconv.Atoi(v)
				return n
			}
		}
		t.Fatal("INFO memory has no number_of_cached_scripts")
		return 0
	}
	if failing {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		defer func() { close(stop); wg.Wait() }()
		for range 4 {
			wg.Go(func() { // NOSCRIPT through the service's client: a failure to its breaker
				for {
					select {
					case <-stop:
						return
					default:
					}
					_, _ = p.Server.Svc.Redis.EvalShaCtx(ctx, strings.Repeat("0", 40), []string{"x"})
				}
			})
		}
	}
	const scripts = 11 // warmup, reserve, confirm, release, expire_due, adjust, restore, acked, fence, lost, wipe
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for n := cached(); n < scripts; n = cached() {
		if time.Now().After(deadline) {
			t.Fatalf("%d scripts cached 10 s after the cache was flushed, want %d", n, scripts)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
