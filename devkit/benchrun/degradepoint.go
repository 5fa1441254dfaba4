package benchrun

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/devkit/baseline"
	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/loadgen"
	"github.com/seckill/seckill/devkit/standalone"
	schema "github.com/seckill/seckill/sql"
)

// point starts a system with the given semaphore and measures a burst through Redis
// (redis is filled in), cuts Redis, and measures one burst against the MySQL book, on the
// same activity.
func (e *degradeEnv) point(ctx context.Context, i, size int, redis *Measurement) (p DegradePoint) {
	p = DegradePoint{Concurrency: size, Clients: e.c.DegradeClients}
	done, err := e.fresh(ctx, i)
	if err != nil {
		p.Error = err.Error()
		return p
	}
	defer done()
	sys, proxy, stop, err := e.start(ctx, size)
	if err != nil {
		p.Error = err.Error()
		return p
	}
	defer stop()
	// More than any burst can reserve: nothing sells out.
	stock := int64(2*e.c.DegradeRequests + 1000)
	aid, err := createWarm(ctx, sys, stock)
	if err != nil {
		p.Error = err.Error()
		return p
	}
	p.ActivityID = aid
	ans := &answers{}
	if err := e.redisBurst(ctx, sys, &p, ans, redis); err != nil {
		p.Error = err.Error()
		return p
	}
	proxy.Cut()
	if err := e.awaitMySQL(ctx, sys, &p, ans); err != nil {
		p.Error = err.Error()
		return p
	}
	if err := e.mysqlBurst(ctx, sys, &p, ans); err != nil {
		p.Error = err.Error()
		return p
	}
	p.Book, err = e.book(ctx, sys, aid, stock, ans)
	if err != nil {
		p.Error = "read the books: " + err.Error()
		return p
	}
	p.Failed = p.Book.Check()
	return p
}

// start starts the point's system: an inventory instance with Degrade mysql and the given
// semaphore, its Redis through a proxy of its own. stop closes both.
func (e *degradeEnv) start(ctx context.Context, size int) (*standalone.System, *devenv.Proxy, func(), error) {
	c := e.c
	e.logf("degrade mode, semaphore %d: starting an inventory instance with Degrade mysql, its Redis through a proxy",
		size)
	// A proxy of its own: go-zero keeps a breaker per Redis address for the life of the
	// process, and the last point's is open.
	proxy, err := devenv.StartProxy(e.sys.RedisAddr)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("redis proxy: %w", err)
	}
	sys, err := standalone.Start(ctx, standalone.Config{
		EtcDir: c.Standalone.EtcDir, RedisAddr: e.sys.RedisAddr, MySQLDSN: e.dsn, KafkaBrokers: e.kafka.Addrs,
		KeyPrefix: e.prefix, APIAddr: "127.0.0.1:0", Mode: c.Standalone.Mode, LogLevel: c.Standalone.LogLevel,
		LogDir: c.Standalone.LogDir, Configure: func(cs *standalone.Configs) {
			inv := &cs.Inventory
			inv.Degrade = "mysql"
			inv.DegradeMode.Concurrency = size
			inv.DegradeMode.LeaseMs, inv.DegradeMode.RelayMarginMs = degradeLeaseMs, degradeLeaseMs
			inv.StockRedis.Host = proxy.Addr
		},
	})
	if err != nil {
		_ = proxy.Close()
		return nil, nil, nil, fmt.Errorf("start: %w", err)
	}
	// The system closes before the proxy: this instance never sees Redis again.
	return sys, proxy, func() { sys.Close(); _ = proxy.Close() }, nil
}

// burstConfig bounds a burst of the point.
func (e *degradeEnv) burstConfig() baseline.LoadConfig {
	c := e.c
	return baseline.LoadConfig{Concurrency: c.DegradeClients, Requests: c.DegradeRequests,
		MaxDuration: c.DegradeDuration, Timeout: requestTimeout}
}

// redisBurst is the burst through Redis before the cut (redis is filled in); what Redis
// acknowledged is in MySQL before the cut.
func (e *degradeEnv) redisBurst(ctx context.Context, sys *standalone.System, p *DegradePoint, ans *answers,
	redis *Measurement) error {
	c, n := e.c, e.c.DegradeRequests
	e.logf("degrade mode, semaphore %d: buyers through Redis for %s, %d clients", p.Concurrency, c.DegradeDuration,
		c.DegradeClients)
	r := baseline.Load(ctx, e.burstConfig(), sys.APIURL,
		buyerRequest(apiclient.ReservePath, sys.BuyerSecret, e.take(n), p.ActivityID, "degrade-redis"), ans.reserved)
	*redis = fromLoad(*redis, r)
	p.RedisRate, p.RedisP99 = redis.Rate, redis.P99
	// What Redis acknowledged is in MySQL before the cut (the relay's window is
	// DESIGN.md's "Failure stance", not what this measures).
	if err := e.awaitOrders(ctx, p.ActivityID, ans.count(), 30*time.Second); err != nil {
		return fmt.Errorf("the Redis row's orders: %w", err)
	}
	return nil
}

// awaitMySQL sends probe buyers from the cut on until the MySQL book sells (the first
// probe's BUSY switches the mode); p.SwitchWait is how long that took.
func (e *degradeEnv) awaitMySQL(ctx context.Context, sys *standalone.System, p *DegradePoint, ans *answers) error {
	cut := time.Now()
	probes := map[string]int{}
	for {
		if ctx.Err() != nil || time.Since(cut) > 20*time.Second {
			return fmt.Errorf("the MySQL book did not sell within 20 s of the cut (probes: %s)",
				loadgen.FormatCounts(probes))
		}
		pr := baseline.Load(ctx, baseline.LoadConfig{Concurrency: 1, Requests: 1, Timeout: requestTimeout}, sys.APIURL,
			buyerRequest(apiclient.ReservePath, sys.BuyerSecret, e.take(1), p.ActivityID, "degrade-probe"), ans.reserved)
		if pr.Good == 1 {
			break
		}
		for k, v := range pr.Other {
			probes[k] += v
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.SwitchWait = time.Since(cut)
	return nil
}

// mysqlBurst is the burst against the MySQL book, with the server's Threads_running
// sampled every 10 ms and its row-lock figures read before and after.
func (e *degradeEnv) mysqlBurst(ctx context.Context, sys *standalone.System, p *DegradePoint, ans *answers) error {
	c := e.c
	e.logf("degrade mode, semaphore %d: buyers through MySQL for %s, %d clients (MySQL sold %s after the cut)",
		p.Concurrency, c.DegradeDuration, c.DegradeClients, p.SwitchWait.Round(time.Millisecond))
	before, err := e.globalStatus(ctx)
	if err != nil {
		return fmt.Errorf("SHOW GLOBAL STATUS: %w", err)
	}
	running, stop := e.sampleRunning(ctx)
	var busyMu sync.Mutex
	p.BusyBy = map[string]int{}
	classify := func(status int, body []byte) bool {
		if ans.reserved(status, body) {
			return true
		}
		if status == http.StatusServiceUnavailable {
			busyMu.Lock()
			p.BusyBy[BusyKind(body)]++
			busyMu.Unlock()
		}
		return false
	}
	r := baseline.Load(ctx, e.burstConfig(), sys.APIURL,
		buyerRequest(apiclient.ReservePath, sys.BuyerSecret, e.take(c.DegradeRequests), p.ActivityID, "degrade-mysql"),
		classify)
	stop()
	after, err := e.globalStatus(ctx)
	if err != nil {
		return fmt.Errorf("SHOW GLOBAL STATUS: %w", err)
	}
	p.MySQL = seen(before, after, *running)
	fillPoint(p, r)
	return nil
}

// sampleRunning samples Threads_running every 10 ms until stop is called; the samples are
// complete once it returned.
func (e *degradeEnv) sampleRunning(ctx context.Context) (*[]int64, func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var running []int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if s, err := e.globalStatus(ctx); err == nil {
				running = append(running, s["Threads_running"])
			}
		}
	}()
	return &running, func() {
		close(done)
		wg.Wait()
	}
}

// fillPoint counts a burst's answers.
func fillPoint(p *DegradePoint, r baseline.LoadResult) {
	lat := loadgen.Summarize(r.Latencies)
	p.Sent, p.Reserved, p.NotSent, p.Elapsed = r.Sent, r.Good, r.NotSent, r.Elapsed
	p.P50, p.P99, p.Rate = lat.P50, lat.P99, r.Rate()
	p.Other = map[string]int{}
	for k, v := range r.Other {
		if k == "HTTP_503 BUSY" {
			p.Busy += v
		} else {
			p.Other[k] = v
		}
	}
}

// seen is the MySQL figures of a burst from the status before and after it and the
// Threads_running samples taken during it.
func seen(before, after map[string]int64, running []int64) MySQLSeen {
	s := MySQLSeen{Samples: len(running),
		RowLockWaits:  after["Innodb_row_lock_waits"] - before["Innodb_row_lock_waits"],
		RowLockTimeMs: after["Innodb_row_lock_time"] - before["Innodb_row_lock_time"]}
	var sum int64
	for _, v := range running {
		s.ThreadsRunningMax = max(s.ThreadsRunningMax, v)
		sum += v
	}
	if len(running) > 0 {
		s.ThreadsRunningMean = float64(sum) / float64(len(running))
	}
	return s
}

// statusNames are the global status variables a burst reads.
var statusNames = []string{"Threads_running", "Innodb_row_lock_waits", "Innodb_row_lock_time"}

// ParseStatus turns SHOW GLOBAL STATUS rows (name, value) into the wanted variables;
// a value that is not an integer is an error (a server that reports otherwise is not
// one this bench reads).
func ParseStatus(rows [][2]string, want []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, r := range rows {
		for _, w := range want {
			if strings.EqualFold(r[0], w) {
				v, err := strconv.ParseInt(strings.TrimSpace(r[1]), 10, 64)
				if err != nil {
					return nil, fmt.Errorf("%s = %q: %w", r[0], r[1], err)
				}
				out[w] = v
			}
		}
	}
	for _, w := range want {
		if _, ok := out[w]; !ok {
			return nil, fmt.Errorf("%s not in SHOW GLOBAL STATUS", w)
		}
	}
	return out, nil
}

func (e *degradeEnv) globalStatus(ctx context.Context) (map[string]int64, error) {
	rows, err := schema.GlobalStatus(ctx, e.admin, statusNames...)
	if err != nil {
		return nil, err
	}
	return ParseStatus(rows, statusNames)
}
