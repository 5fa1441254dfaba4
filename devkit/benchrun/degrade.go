package benchrun

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/devkit/baseline"
	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/loadgen"
	"github.com/seckill/seckill/devkit/standalone"
	"github.com/seckill/seckill/internal/authtoken"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/model"
	schema "github.com/seckill/seckill/sql"
)

// Degrade mode in the bench (issue 10): the inventory service with `Degrade: mysql` and its
// StockRedis behind a devenv.Proxy. Per semaphore size (DegradeMode.Concurrency) a
// deployment of its own is started (the system's Redis server under a key prefix of its
// own, a database of its own on the system's MySQL server, an in-process Kafka of its
// own, and the three services); on it an activity is created and warmed, a burst goes
// through Redis (the baseline), the proxy is cut (Redis unreachable for that inventory
// instance only: the gateway keeps its own Redis), a probe buyer's BUSY switches the
// activity to mode mysql for real, probes go on until MySQL sells, then the burst through
// the MySQL book. The first point is the shipped Concurrency: the row.

// DegradePoint is one burst against the MySQL book.
type DegradePoint struct {
	Concurrency int   `json:"semaphore"` // DegradeMode.Concurrency of the inventory instance
	Clients     int   `json:"clients"`
	ActivityID  int64 `json:"activity_id"`
	Sent        int   `json:"sent"`
	Reserved    int   `json:"reserved"` // 200 with an order_no
	Busy        int   `json:"busy"`     // 503 BUSY, of every kind
	// BusyBy splits the BUSY answers by who gave them (BusyKind).
	BusyBy  map[string]int `json:"busy_by,omitempty"`
	Other   map[string]int `json:"other,omitempty"`
	NotSent int            `json:"not_sent,omitempty"`
	Elapsed time.Duration  `json:"elapsed_ns"`
	Rate    float64        `json:"rate_per_s"` // reservations per second
	// RedisRate, RedisP99: the burst through Redis on the same instance and activity
	// before the cut (the same clients and bounds; it also gives every point's gateway
	// the same history of answers, which its breaker counts).
	RedisRate float64       `json:"redis_rate_per_s"`
	RedisP99  time.Duration `json:"redis_p99_ns"`
	P50       time.Duration `json:"p50_ns"`
	P99       time.Duration `json:"p99_ns"`
	// SwitchWait: from the cut to the first reservation the MySQL book made (2L, the relay
	// margin, the writer catching up).
	SwitchWait time.Duration `json:"switch_wait_ns"`
	MySQL      MySQLSeen     `json:"mysql"`
	Book       BookCheck     `json:"book"`
	Failed     []string      `json:"failed_checks,omitempty"`
	Error      string        `json:"error,omitempty"`
}

// BusyShare is the share of sent requests answered BUSY.
func (p DegradePoint) BusyShare() float64 {
	if p.Sent == 0 {
		return 0
	}
	return float64(p.Busy) / float64(p.Sent)
}

// MySQLSeen is what the MySQL server showed during a burst (SHOW GLOBAL STATUS, sampled).
type MySQLSeen struct {
	Samples            int     `json:"samples"`
	ThreadsRunningMax  int64   `json:"threads_running_max"` // the sampler's own thread included
	ThreadsRunningMean float64 `json:"threads_running_mean"`
	RowLockWaits       int64   `json:"innodb_row_lock_waits"`   // delta over the burst
	RowLockTimeMs      int64   `json:"innodb_row_lock_time_ms"` // delta over the burst
}

// BookCheck is the activity's books after its bursts, against the answers.
type BookCheck struct {
	Stock     int64  `json:"stock"`
	Available int64  `json:"available"` // inventory.available
	Live      int64  `json:"live_orders"`
	LiveUnits int64  `json:"live_units"`
	Dup       int64  `json:"duplicate_request_ids"`
	Mode      string `json:"mode"`
	// Answered: the distinct order numbers answered 200 (Redis row, probes, burst);
	// Missing: of those, not a live order in MySQL.
	Answered int64 `json:"reserved_answers"`
	Missing  int64 `json:"answered_not_in_mysql"`
	// Late: live orders whose request was not answered 200 (a BUSY: the gateway's zRPC
	// deadline passed while the transaction committed; BUSY means "retry with the same
	// request_id"); Replayed: of those, how many a retry with the same request id answered
	// 200 with that very order.
	Late         int64    `json:"late_orders"`
	Replayed     int64    `json:"late_replayed"`
	ReplayErrors []string `json:"replay_errors,omitempty"` // what the retries of the others answered
}

// Check is exactly-once: every reservation answered 200 is a live order in MySQL, every
// other live order is what a retry of its BUSY request gets back, the units gone from the
// book are exactly the live orders' units, no request id made two orders, nothing
// oversold, and the activity was in mode mysql.
func (b BookCheck) Check() []string {
	var f []string
	if b.Missing != 0 {
		f = append(f, fmt.Sprintf("%d of %d reservations answered are no live order in MySQL", b.Missing, b.Answered))
	}
	if b.Live != b.Answered-b.Missing+b.Late {
		f = append(f, fmt.Sprintf("%d live orders in MySQL, %d answered + %d late", b.Live, b.Answered-b.Missing, b.Late))
	}
	if b.Replayed != b.Late {
		msg := fmt.Sprintf("%d of %d late orders not returned by a retry of their request", b.Late-b.Replayed, b.Late)
		if len(b.ReplayErrors) > 0 {
			msg += " (" + b.ReplayErrors[0] + ")"
		}
		f = append(f, msg)
	}
	if b.Stock-b.Available != b.LiveUnits {
		f = append(f, fmt.Sprintf("stock %d - available %d = %d units gone, live orders hold %d", b.Stock, b.Available, b.Stock-b.Available, b.LiveUnits))
	}
	if b.LiveUnits > b.Stock || b.Available < 0 {
		f = append(f, fmt.Sprintf("oversold: %d units in orders, stock %d, available %d", b.LiveUnits, b.Stock, b.Available))
	}
	if b.Dup != 0 {
		f = append(f, fmt.Sprintf("%d request ids with two orders", b.Dup))
	}
	if b.Mode != "mysql" {
		f = append(f, fmt.Sprintf("mode %q after the burst, want mysql", b.Mode))
	}
	return f
}

// Kinds of BUSY answer, told apart by their message.
const (
	BusySemaphore = "semaphore"       // the inventory's degrade-mode semaphore was full
	BusyGateway   = "gateway breaker" // go-zero's rest breaker / shedder / MaxConns in the gateway (the request never reached the inventory)
	BusyDeadline  = "zRPC deadline"   // the gateway's zRPC call timed out, or its client breaker was open
	BusyOther     = "other"           // the fence, a dependency
)

// BusyKind says who answered a 503 BUSY with this body.
func BusyKind(body []byte) string {
	var b struct {
		Code string `json:"code"`
		Msg  string `json:"msg"`
	}
	_ = json.Unmarshal(body, &b)
	switch {
	case strings.Contains(b.Msg, "too many requests into MySQL"):
		return BusySemaphore
	case strings.HasPrefix(b.Msg, "overloaded"):
		return BusyGateway
	case strings.HasPrefix(b.Msg, "service busy"):
		return BusyDeadline
	}
	return BusyOther
}

// answers collects the order numbers of reservations answered 200; its reserved is the
// classifier of baseline.Load (baseline.IsReserved, remembering the order number).
type answers struct {
	mu     sync.Mutex
	orders map[string]bool
}

func (a *answers) reserved(status int, body []byte) bool {
	var b struct {
		OrderNo string `json:"order_no"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &b) != nil || b.OrderNo == "" {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.orders == nil {
		a.orders = map[string]bool{}
	}
	a.orders[b.OrderNo] = true
	return true
}

func (a *answers) has(orderNo string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.orders[orderNo]
}

func (a *answers) count() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return int64(len(a.orders))
}

// Degrade is the degrade-mode part of a run.
type Degrade struct {
	Clients     int            `json:"clients"`
	Requests    int            `json:"requests"`
	MaxDuration time.Duration  `json:"max_duration_ns"`
	LeaseMs     int            `json:"lease_ms"`
	Points      []DegradePoint `json:"points"`
}

// ParseSweep reads a comma-separated list of semaphore sizes ("4,16,64").
func ParseSweep(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 10000 {
			return nil, fmt.Errorf("semaphore size %q: want an integer in [1, 10000]", f)
		}
		out = append(out, n)
	}
	return out, nil
}

const (
	degradeLeaseMs = 250 // the fence's lease in the bench (shipped 1000): MySQL sells 2L after the switch
	reservePath    = "/v1/seckill/orders"
)

// degradeEnv is what every point shares.
type degradeEnv struct {
	c      *Config
	sys    *standalone.System
	tag    string
	server *mysql.Config // the system's MySQL DSN
	admin  *sql.DB       // the server: SHOW GLOBAL STATUS, databases
	// The current point's deployment (fresh).
	kafka     *devenv.Kafka
	dsn       string
	prefix    string
	conn      sqlx.SqlConn
	inventory model.InventoryModel
	orders    model.SeckillOrderModel
	logf      func(string, ...any)
	uid       int64 // next buyer id
}

// degradeRows measures degrade mode: the row "reservations in degrade mode (MySQL book)"
// beside "reservations via the Redis path" (the same instance and activity, before the
// cut, same clients) and the semaphore sweep.
func degradeRows(ctx context.Context, c *Config, sys *standalone.System, logf func(string, ...any), notes *[]string) (Row, *Degrade) {
	row := Row{Label: "degrade mode",
		Subject:  Measurement{Name: "reservations in degrade mode (MySQL book)", Unit: "/s"},
		Baseline: Measurement{Name: "reservations via the Redis path", Unit: "/s"}}
	d := &Degrade{Clients: c.DegradeClients, Requests: c.DegradeRequests, MaxDuration: c.DegradeDuration, LeaseMs: degradeLeaseMs}
	env, closeEnv, err := newDegradeEnv(ctx, c, sys, logf)
	if err != nil {
		row.Error = err.Error()
		return row, d
	}
	defer closeEnv()

	shipped := sys.Configs.Inventory.DegradeMode.Concurrency
	row.Subject.Name = fmt.Sprintf("reservations in degrade mode (MySQL book, semaphore %d)", shipped)
	sizes := append([]int{shipped}, c.DegradeSweep...)
	for i, size := range sizes {
		redis := row.Baseline
		p := env.point(ctx, i, size, &redis)
		if p.Error != "" {
			logf("degrade mode, semaphore %d: not measured: %s", size, p.Error)
		}
		d.Points = append(d.Points, p)
		if i == 0 {
			if p.Error != "" {
				row.Error = p.Error
			}
			row.Baseline = redis
			row.Subject.Count, row.Subject.Rate, row.Subject.Elapsed = p.Reserved, p.Rate, p.Elapsed
			row.Subject.P50, row.Subject.P99, row.Subject.NotSent = p.P50, p.P99, p.NotSent
			row.Subject.Other = map[string]int{}
			for k, v := range p.Other {
				row.Subject.Other[k] = v
			}
			if p.Busy > 0 {
				row.Subject.Other["HTTP_503 BUSY"] = p.Busy
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	row.compute()
	where := "a private MariaDB"
	if !contains(sys.Private, "mariadb") {
		where = "a MySQL server shared with other work (its global status counts that work too)"
	}
	*notes = append(*notes,
		fmt.Sprintf("degrade mode: per semaphore size a deployment of its own (a database, a Redis key prefix, a Kafka, the three services; inventory `Degrade: mysql`, DegradeMode.LeaseMs %d (shipped 1000: only the switch is quicker), its StockRedis through a loopback proxy that is cut; the gateway keeps its Redis); an activity warmed, the proxy cut, probe buyers until the MySQL book sells (the first probe's BUSY switches the mode), then a burst of %s from %d clients (fresh buyers, one attempt each, no retries: a BUSY is an answer; at most %d buyers); before the cut, a burst through Redis on the same instance and activity with the same clients and bounds (the row's baseline, and each point's vs Redis)",
			degradeLeaseMs, c.DegradeDuration, c.DegradeClients, c.DegradeRequests),
		"degrade mode: MySQL seen on "+where+": Threads_running sampled every 10 ms (the sampler's own thread included), Innodb_row_lock_waits / _time deltas over the burst; exactly-once per activity: every order number answered 200 is a live order in MySQL; every other live order is late (made under a BUSY: the gateway's zRPC deadline passed while its transaction committed) and a retry with its request id answers that very order; stock - available = the live orders' units; no request id twice")
	return row, d
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func newDegradeEnv(ctx context.Context, c *Config, sys *standalone.System, logf func(string, ...any)) (*degradeEnv, func(), error) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	env := &degradeEnv{c: c, sys: sys, logf: logf, tag: hex.EncodeToString(b[:]),
		uid: time.Now().Unix()%1_000_000*1_000_000 + 500_000}
	mc, err := mysql.ParseDSN(sys.MySQLDSN)
	if err != nil {
		return nil, nil, err
	}
	env.server = mc
	server := *mc
	server.DBName = ""
	if env.admin, err = sql.Open("mysql", server.FormatDSN()); err != nil {
		return nil, nil, err
	}
	env.admin.SetMaxOpenConns(2)
	return env, func() { _ = env.admin.Close() }, nil
}

// fresh gives point i a deployment of its own beside the others' (closed by then): a
// database on the system's MySQL server, a key prefix on its Redis server, an in-process
// Kafka. Shared, the next point's jobs and recovery would work on the last point's
// activities (rebuilding thousands of orders into Redis during its bursts).
func (e *degradeEnv) fresh(ctx context.Context, i int) (func(), error) {
	var cleanup []func()
	closeAll := func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
	}
	name := fmt.Sprintf("seckill_degrade_%s_%d", e.tag, i)
	e.prefix = fmt.Sprintf("%sdegrade-%s-%d:", e.sys.KeyPrefix, e.tag, i)
	mc := *e.server
	mc.DBName = name
	e.dsn = mc.FormatDSN()
	cleanup = append(cleanup, func() {
		// go-zero keeps the services' pool of this DSN for the life of the process: end
		// its sessions so that they hold no server slots.
		dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = schema.Disconnect(dctx, e.admin, name)
		_ = schema.DropDatabase(dctx, e.admin, name)
	})
	if err := devenv.CreateDatabase(ctx, e.dsn, name); err != nil {
		closeAll()
		return nil, fmt.Errorf("database: %w", err)
	}
	db, err := sql.Open("mysql", e.dsn)
	if err != nil {
		closeAll()
		return nil, err
	}
	db.SetMaxOpenConns(2)
	cleanup = append(cleanup, func() { _ = db.Close() })
	e.conn = sqlx.NewSqlConnFromDB(db)
	e.inventory, e.orders = model.NewInventoryModel(e.conn), model.NewSeckillOrderModel(e.conn)
	k, err := devenv.StartKafka("127.0.0.1:0", "", 4)
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("kafka: %w", err)
	}
	e.kafka = k
	cleanup = append(cleanup, func() { _ = k.Close() })
	return closeAll, nil
}

// point starts a system with the given semaphore and measures a burst through Redis
// (redis is filled in), cuts Redis, and measures one burst against the MySQL book, on the
// same activity.
func (e *degradeEnv) point(ctx context.Context, i, size int, redis *Measurement) (p DegradePoint) {
	c := e.c
	p = DegradePoint{Concurrency: size, Clients: c.DegradeClients}
	done, err := e.fresh(ctx, i)
	if err != nil {
		p.Error = err.Error()
		return p
	}
	defer done()
	e.logf("degrade mode, semaphore %d: starting an inventory instance with Degrade mysql, its Redis through a proxy", size)
	// A proxy of its own: go-zero keeps a breaker per Redis address for the life of the
	// process, and the last point's is open.
	proxy, err := devenv.StartProxy(e.sys.RedisAddr)
	if err != nil {
		p.Error = "redis proxy: " + err.Error()
		return p
	}
	defer func() { _ = proxy.Close() }()
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
		p.Error = "start: " + err.Error()
		return p
	}
	defer sys.Close() // before the proxy's Close: this instance never sees Redis again

	// More than any burst can reserve: nothing sells out.
	n := c.DegradeRequests
	stock := int64(2*n + 1000)
	aid, err := createWarm(ctx, sys, stock)
	if err != nil {
		p.Error = err.Error()
		return p
	}
	p.ActivityID = aid
	ans := &answers{}
	lc := baseline.LoadConfig{Concurrency: c.DegradeClients, Requests: n, MaxDuration: c.DegradeDuration, Timeout: requestTimeout}

	{
		e.logf("degrade mode, semaphore %d: buyers through Redis for %s, %d clients", size, c.DegradeDuration, c.DegradeClients)
		r := baseline.Load(ctx, lc, buyerRequest(sys.APIURL+reservePath, sys.BuyerSecret, e.take(n), aid, "degrade-redis"), ans.reserved)
		*redis = fromLoad(*redis, r)
		p.RedisRate, p.RedisP99 = redis.Rate, redis.P99
		// What Redis acknowledged is in MySQL before the cut (the relay's window is
		// DESIGN.md's "Failure stance", not what this measures).
		if err := e.awaitOrders(ctx, aid, ans.count(), 30*time.Second); err != nil {
			p.Error = "the Redis row's orders: " + err.Error()
			return p
		}
	}

	proxy.Cut()
	cut := time.Now()
	probes := map[string]int{}
	for {
		if ctx.Err() != nil || time.Since(cut) > 20*time.Second {
			p.Error = fmt.Sprintf("the MySQL book did not sell within 20 s of the cut (probes: %s)", loadgen.FormatCounts(probes))
			return p
		}
		pr := baseline.Load(ctx, baseline.LoadConfig{Concurrency: 1, Requests: 1, Timeout: requestTimeout},
			buyerRequest(sys.APIURL+reservePath, sys.BuyerSecret, e.take(1), aid, "degrade-probe"), ans.reserved)
		if pr.Good == 1 {
			break
		}
		for k, v := range pr.Other {
			probes[k] += v
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.SwitchWait = time.Since(cut)

	e.logf("degrade mode, semaphore %d: buyers through MySQL for %s, %d clients (MySQL sold %s after the cut)", size, c.DegradeDuration, c.DegradeClients, p.SwitchWait.Round(time.Millisecond))
	before, err := e.globalStatus(ctx)
	if err != nil {
		p.Error = "SHOW GLOBAL STATUS: " + err.Error()
		return p
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var running []int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			if s, err := e.globalStatus(ctx); err == nil {
				running = append(running, s["Threads_running"])
			}
		}
	}()
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
	r := baseline.Load(ctx, lc, buyerRequest(sys.APIURL+reservePath, sys.BuyerSecret, e.take(n), aid, "degrade-mysql"), classify)
	close(stop)
	wg.Wait()
	after, err := e.globalStatus(ctx)
	if err != nil {
		p.Error = "SHOW GLOBAL STATUS: " + err.Error()
		return p
	}
	p.MySQL = seen(before, after, running)
	fillPoint(&p, r)

	p.Book, err = e.book(ctx, sys, aid, stock, ans)
	if err != nil {
		p.Error = "read the books: " + err.Error()
		return p
	}
	p.Failed = p.Book.Check()
	return p
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

// take reserves n fresh buyer ids and returns the uid base of buyerRequest.
func (e *degradeEnv) take(n int) int64 {
	base := e.uid
	e.uid += int64(n) + 1
	return base
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

// awaitOrders waits until MySQL holds at least want orders of the activity (more: an
// order made under a BUSY answer).
func (e *degradeEnv) awaitOrders(ctx context.Context, aid, want int64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		orders, err := e.orders.FindAuditByActivity(ctx, aid)
		n := int64(len(orders))
		if err == nil && n >= want {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%d orders in MySQL after %s, want %d (err %v)", n, limit, want, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// book reads the activity's books and orders, and retries the request of every live
// order not answered 200.
func (e *degradeEnv) book(ctx context.Context, sys *standalone.System, aid, stock int64, ans *answers) (BookCheck, error) {
	b := BookCheck{Stock: stock, Answered: ans.count()}
	book, err := e.inventory.FindBook(ctx, e.conn, aid)
	if err != nil {
		return b, err
	}
	b.Available = int64(book.Available)
	if b.Mode, err = e.inventory.FindMode(ctx, aid); err != nil {
		return b, err
	}
	orders, err := e.orders.FindAuditByActivity(ctx, aid)
	if err != nil {
		return b, err
	}
	type order struct {
		no, rid string
		uid     int64
	}
	type request struct {
		uid int64
		rid string
	}
	var late []order
	live := map[string]bool{}
	requests := map[request]int{}
	for _, o := range orders {
		k := request{int64(o.Uid), o.RequestId}
		if requests[k]++; requests[k] == 2 {
			b.Dup++ // a request id that made two orders (whatever their states)
		}
		if o.Status != domain.StateReserved && o.Status != domain.StatePaid {
			continue
		}
		b.Live++
		b.LiveUnits += int64(o.Quantity)
		live[o.OrderNo] = true
		if !ans.has(o.OrderNo) {
			late = append(late, order{no: o.OrderNo, rid: o.RequestId, uid: int64(o.Uid)})
		}
	}
	ans.mu.Lock()
	for no := range ans.orders {
		if !live[no] {
			b.Missing++
		}
	}
	ans.mu.Unlock()
	b.Late = int64(len(late))
	for _, o := range late {
		if no, err := replay(ctx, sys, aid, o.uid, o.rid); err != nil {
			b.ReplayErrors = append(b.ReplayErrors, fmt.Sprintf("order %s (uid %d, request %s): %v", o.no, o.uid, o.rid, err))
		} else if no != o.no {
			b.ReplayErrors = append(b.ReplayErrors, fmt.Sprintf("order %s (uid %d, request %s): a retry answered order %s", o.no, o.uid, o.rid, no))
		} else {
			b.Replayed++
		}
	}
	return b, nil
}

// replay retries buyer uid's request rid as a client does after a BUSY: the same
// request id again, while the answer is BUSY (for at most 15 s: the gateway's breaker
// may still be shedding right after a burst). It returns the order number answered.
func replay(ctx context.Context, sys *standalone.System, aid, uid int64, rid string) (string, error) {
	deadline := time.Now().Add(15 * time.Second)
	for {
		again := &answers{}
		var last string
		r := baseline.Load(ctx, baseline.LoadConfig{Concurrency: 1, Requests: 1, Timeout: requestTimeout},
			func(int) (*http.Request, error) {
				return reserveRequest(sys.APIURL+reservePath, sys.BuyerSecret, uid, aid, rid)
			}, again.reserved)
		if r.Good == 1 {
			for no := range again.orders {
				return no, nil
			}
		}
		for k := range r.Other {
			last = k
		}
		if !strings.HasPrefix(last, "HTTP_503") || time.Now().After(deadline) || ctx.Err() != nil {
			return "", fmt.Errorf("a retry answered %s", last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// createWarm creates an activity of stock units (per-user limit 1, orders unpaid for 10
// minutes: nothing expires during the bench) through the gateway's merchant API and warms
// it into Redis.
func createWarm(ctx context.Context, sys *standalone.System, stock int64) (int64, error) {
	token, err := authtoken.Merchant(sys.MerchantSecret, 1, time.Hour)
	if err != nil {
		return 0, err
	}
	now := time.Now().Unix()
	var a struct {
		ActivityID int64 `json:"activity_id"`
	}
	// Right after start the gateway may still be connecting to the rpc: retry briefly.
	retry := func(what string, fn func() error) error {
		var err error
		for range 50 {
			if err = fn(); err == nil {
				return nil
			}
			time.Sleep(100 * time.Millisecond)
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := retry("create activity", func() error {
		return adminCall(ctx, sys.APIURL+"/v1/admin/activities", token, map[string]any{
			"sku_id": 1, "name": "bench degrade", "stock": stock, "start_time": now - 1, "end_time": now + 3600,
			"per_user_limit": 1, "pay_timeout_seconds": 600}, &a)
	}); err != nil {
		return 0, err
	}
	var w struct {
		Warmed bool `json:"warmed"`
	}
	if err := retry(fmt.Sprintf("warm up activity %d", a.ActivityID), func() error {
		return adminCall(ctx, fmt.Sprintf("%s/v1/admin/activities/%d/warmup", sys.APIURL, a.ActivityID), token, nil, &w)
	}); err != nil {
		return 0, err
	}
	return a.ActivityID, nil
}

func adminCall(ctx context.Context, url, token string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	return json.Unmarshal(b, out)
}
