package benchrun

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seckill/seckill/devkit/standalone"
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
		f = append(f, fmt.Sprintf("stock %d - available %d = %d units gone, live orders hold %d", b.Stock, b.Available,
			b.Stock-b.Available, b.LiveUnits))
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
	BusySemaphore = "semaphore" // the inventory's degrade-mode semaphore was full
	// BusyGateway: go-zero's rest breaker / shedder / MaxConns in the gateway (the request
	// never reached the inventory).
	BusyGateway  = "gateway breaker"
	BusyDeadline = "zRPC deadline" // the gateway's zRPC call timed out, or its client breaker was open
	BusyOther    = "other"         // the fence, a dependency
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
)

// degradeRows measures degrade mode: the row "reservations in degrade mode (MySQL book)"
// beside "reservations via the Redis path" (the same instance and activity, before the
// cut, same clients) and the semaphore sweep.
func degradeRows(ctx context.Context, c *Config, sys *standalone.System, logf func(string, ...any),
	notes *[]string) (Row, *Degrade) {
	row := Row{Label: "degrade mode",
		Subject:  Measurement{Name: "reservations in degrade mode (MySQL book)", Unit: "/s"},
		Baseline: Measurement{Name: "reservations via the Redis path", Unit: "/s"}}
	d := &Degrade{Clients: c.DegradeClients, Requests: c.DegradeRequests, MaxDuration: c.DegradeDuration,
		LeaseMs: degradeLeaseMs}
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
		fmt.Sprintf("degrade mode: per semaphore size a deployment of its own (a database, a Redis key prefix, a Kafka, "+
			"the three services; inventory `Degrade: mysql`, DegradeMode.LeaseMs %d (shipped 1000: only the switch is "+
			"quicker), its StockRedis through a loopback proxy that is cut; the gateway keeps its Redis); an activity "+
			"warmed, the proxy cut, probe buyers until the MySQL book sells (the first probe's BUSY switches the mode), "+
			"then a burst of %s from %d clients (fresh buyers, one attempt each, no retries: a BUSY is an answer; at most "+
			"%d buyers); before the cut, a burst through Redis on the same instance and activity with the same clients "+
			"and bounds (the row's baseline, and each point's vs Redis)",
			degradeLeaseMs, c.DegradeDuration, c.DegradeClients, c.DegradeRequests),
		"degrade mode: MySQL seen on "+where+": Threads_running sampled every 10 ms (the sampler's own thread included), "+
			"Innodb_row_lock_waits / _time deltas over the burst; exactly-once per activity: every order number answered 200 "+
			"is a live order in MySQL; every other live order is late (made under a BUSY: the gateway's zRPC deadline "+
			"passed while its transaction committed) and a retry with its request id answers that very order; stock - "+
			"available = the live orders' units; no request id twice")
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
