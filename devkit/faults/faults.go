// Package faults is the fault suite behind `make faults`: the real services as separate
// OS processes (the ./rpc, ./mq and ./api mains, built once) over a private redis-server
// and MariaDB (devkit/devenv; never the shared servers) and a kfake broker in a process
// of its own, with one fault injected for real per row while a burst of concurrent buyers
// runs over HTTP. After the burst each row drains (reconciliation polled until
// consistent, bounded) and counts: reservations acknowledged, oversold units, lost orders,
// duplicated orders, time to consistent. One table; a FAIL anywhere fails the suite.
package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/rpc/rpcserver"
)

// Scale sets how long each fault lasts and how big each burst is.
type Scale struct {
	Buyers, Stock   int
	Pause           time.Duration // CLIENT PAUSE
	RedisDown       time.Duration // between SHUTDOWN NOSAVE and the restart
	MySQLDown       time.Duration // the proxy cut
	FaultAt         time.Duration // into the burst
	DrainBound      time.Duration // how long a row may take to become consistent
	RequestDeadline time.Duration // after the burst window, how long buyers keep retrying
}

// Full is `make faults`; Short is the test's version.
var (
	Full = Scale{Buyers: 600, Stock: 200, Pause: 3 * time.Second, RedisDown: 10 * time.Second,
		MySQLDown: 10 * time.Second, FaultAt: 1500 * time.Millisecond, DrainBound: 90 * time.Second,
		RequestDeadline: 20 * time.Second}
	Short = Scale{Buyers: 150, Stock: 50, Pause: 3 * time.Second, RedisDown: 4 * time.Second,
		MySQLDown: 4 * time.Second, FaultAt: 800 * time.Millisecond, DrainBound: 60 * time.Second,
		RequestDeadline: 15 * time.Second}
)

// Row is one fault.
type Row struct {
	Name string
	// Inventory changes the inventory service's config for this row (nil: as loaded from
	// etc/): rpc is restarted with it before the burst and with the suite's config after.
	Inventory func(*rpcserver.Config)
	// Burst adjusts the row's buyers (nil: the default burst).
	Burst func(*Burst)
	// Inject runs FaultAt into the burst and returns once the fault is over and recovery
	// done (the process restarted, Redis back, the proxy restored): that moment starts the
	// clock of "time to consistent". Nil: no fault besides the burst.
	Inject func(ctx context.Context, s *System, sc Scale) error
	// Expect names an answer the buyers must have seen at least once: evidence that the
	// fault bit ("" : none asked).
	Expect string
	// Forbid names an answer no buyer may get: the row fails if one did ("": none).
	Forbid string
	// Statuses, when set, are the only HTTP statuses buyers may see (a transport failure
	// counts as status 0).
	Statuses []int
	// Check runs once the row is consistent and audited; what it returns are violations
	// (the row fails) and notes (reported). Nil: none.
	Check func(ctx context.Context, s *System, aid int64) (violations, notes []string)
}

// Rows are the suite, in order.
func Rows() []Row {
	return append([]Row{
		// The inventory service gone is BUSY at the gateway, never 500 (DESIGN.md "Errors
		// across zRPC"; it was 187 INTERNAL: go-zero's open client breaker).
		{Name: "kill -9 inventory service (rpc)", Forbid: "INTERNAL",
			Inject: func(ctx context.Context, s *System, _ Scale) error {
				s.Inventory.kill()
				time.Sleep(time.Second)
				return s.Inventory.start(ctx)
			}},
		{Name: "kill -9 writer (mq)", Inject: func(ctx context.Context, s *System, _ Scale) error {
			s.Writer.kill()
			time.Sleep(2 * time.Second)
			return s.Writer.start(ctx)
		}},
		{Name: "Redis paused (CLIENT PAUSE ALL)", Inject: func(ctx context.Context, s *System, sc Scale) error {
			if err := redisDo(ctx, s.Redis.Addr, "CLIENT", "PAUSE", sc.Pause.Milliseconds(), "ALL"); err != nil {
				return err
			}
			time.Sleep(sc.Pause)
			return nil
		}},
		{Name: "Redis down (SHUTDOWN NOSAVE), degrade off", Expect: "BUSY", Inject: redisDown},
		// Degrade mode (issue 10): the activity is served from MySQL while Redis is down,
		// then rebuilt into Redis from MySQL once it is back.
		{Name: "Redis down (SHUTDOWN NOSAVE), degrade mysql", Inventory: func(c *rpcserver.Config) {
			c.Degrade = "mysql"
		}, Inject: redisDown},
		// The rebuild (issue 9) brings back every order MySQL holds, and an order is
		// acknowledged only once its event is in Kafka (relay.Acker): MySQL holds it once
		// the writer has drained what Kafka had, before the rebuild reads it.
		{Name: "Redis emptied (FLUSHALL) mid-sale", Inject: func(ctx context.Context, s *System, _ Scale) error {
			return redisDo(ctx, s.Redis.Addr, "FLUSHALL")
		}},
		// A failover to a replica a second behind, or a restart that lost the AOF's last
		// second: Redis holds the stock hash, same epoch, without its latest writes. The
		// Acker sees its acknowledged change count above the hash's and has the activity
		// rebuilt from MySQL (relay.Acker, "a partial rollback").
		{Name: "Redis rolled back (lost its last second of writes)", Expect: "BUSY",
			Inject: func(ctx context.Context, s *System, sc Scale) error {
				return rollBack(ctx, s.Redis.Addr, time.Second)
			}},
		{Name: "MySQL unreachable (proxy cut)", Inject: func(ctx context.Context, s *System, sc Scale) error {
			s.MySQLCut.Cut()
			time.Sleep(sc.MySQLDown)
			s.MySQLCut.Restore()
			return nil
		}},
		{Name: "Kafka broker kill -9 + restart", Inject: func(ctx context.Context, s *System, _ Scale) error {
			s.Kafka.kill()
			return s.Kafka.start(ctx) // same port, same data directory
		}},
		// A change answered BUSY while Kafka is down is retried; its retry (a replay,
		// "already paid") is answered only once its event is in Kafka. Redis emptied
		// while Kafka is still down then loses nothing acknowledged: before, such retries
		// were answered from Redis alone, and the FLUSHALL lost them.
		{Name: "Kafka down, then Redis emptied (FLUSHALL), then Kafka back", Expect: "BUSY",
			Inject: func(ctx context.Context, s *System, sc Scale) error {
				s.Kafka.kill()
				time.Sleep(sc.Pause) // buyers get BUSY and retry with the same request ids
				if err := redisDo(ctx, s.Redis.Addr, "FLUSHALL"); err != nil {
					return err
				}
				time.Sleep(time.Second)
				return s.Kafka.start(ctx) // same port, same data directory
			}},
		{Name: "pay-vs-expiry race during a burst", Burst: func(b *Burst) {
			b.PayTimeout, b.PayNearExpiry, b.Pay, b.Cancel = 2, true, 0.7, 0
			b.Stock /= 4
			b.Arrive += 4 * time.Second // expired stock goes back on sale to later buyers
		}},
	}, drawRows()...)
}

// redisDown shuts the private Redis down (SHUTDOWN NOSAVE) for sc.RedisDown, then starts
// it again on its directory.
func redisDown(ctx context.Context, s *System, sc Scale) error {
	_ = redisDo(ctx, s.Redis.Addr, "SHUTDOWN", "NOSAVE") // the connection drops: no reply
	select {
	case <-s.Redis.Exited():
	case <-time.After(10 * time.Second):
		return fmt.Errorf("redis did not shut down")
	}
	time.Sleep(sc.RedisDown)
	return s.restartRedis(ctx)
}

// rollBack takes every key of the Redis at addr as it is (DUMP, PTTL), waits lost while
// the burst goes on, then in one step puts every key back as it was and deletes the keys
// written since: what a failover to a replica lost behind, or a restart that lost the
// AOF's tail, leaves.
func rollBack(ctx context.Context, addr string, lost time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true})
	defer c.Close()
	type kept struct {
		dump string
		pttl time.Duration
	}
	snap := map[string]kept{}
	iter := c.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		d, err := c.Dump(ctx, k).Result()
		if errors.Is(err, redis.Nil) {
			continue // expired meanwhile
		}
		if err != nil {
			return err
		}
		ttl, err := c.PTTL(ctx, k).Result()
		if err != nil {
			return err
		}
		snap[k] = kept{d, max(ttl, 0)}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	time.Sleep(lost)
	var now []string
	iter = c.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		now = append(now, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return err
	}
	// One MULTI: no other client's command runs between the deletes and the restores.
	// A key written between the scan and the MULTI stays, as a replica that received one
	// more write would have it.
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range now {
			if _, ok := snap[k]; !ok {
				p.Del(ctx, k)
			}
		}
		for k, v := range snap {
			p.RestoreReplace(ctx, k, v.pttl, v.dump)
		}
		return nil
	})
	return err
}

// Result is one row of the table.
type Result struct {
	Row              Row
	Acknowledged     int
	Oversold         int64
	Lost, Duplicated int
	// ToldNo: orders held for requests whose buyer was finally told no (SOLD_OUT and the like).
	ToldNo           int
	Consistent       bool
	TimeToConsistent time.Duration
	Busy             time.Duration // from the first BUSY a buyer was answered to the last
	Status           string        // PASS, FAIL
	Reasons          []string
	Codes            map[string]int // non-200 answers the buyers got, by code
}

// Statuses.
const (
	Pass = "PASS"
	Fail = "FAIL"
)

// Config is one run of the suite.
type Config struct {
	Options
	Scale Scale
	Only  []string // run only rows whose name contains one of these (empty: all)
	// Cluster runs the cluster table (ClusterRows on StartCluster) instead of the
	// single-node one.
	Cluster bool
}

// Run starts the system, runs every row and returns the results (an error: the suite could
// not run at all).
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	log := cfg.Log
	if log == nil {
		log = io.Discard
	}
	logx.SetLevel(logx.ErrorLevel) // the suite's own MySQL reads would log every query
	start, rows := Start, Rows()
	if cfg.Cluster {
		start, rows = StartCluster, ClusterRows()
	}
	s, err := start(ctx, cfg.Options)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var results []Result
	for _, row := range rows {
		if !selected(row.Name, cfg.Only) {
			continue
		}
		fmt.Fprintf(log, "row: %s\n", row.Name)
		r := runRow(ctx, s, row, cfg.Scale)
		fmt.Fprintf(log, "  %s: acknowledged %d, oversold %d, lost %d, duplicated %d, BUSY %s, consistent %v in %s\n",
			r.Status, r.Acknowledged, r.Oversold, r.Lost, r.Duplicated, r.Busy.Round(100*time.Millisecond),
			r.Consistent, r.TimeToConsistent.Round(100*time.Millisecond))
		results = append(results, r)
		if ctx.Err() != nil {
			return results, ctx.Err()
		}
	}
	return results, nil
}

func selected(name string, only []string) bool {
	if len(only) == 0 {
		return true
	}
	for _, o := range only {
		if strings.Contains(strings.ToLower(name), strings.ToLower(o)) {
			return true
		}
	}
	return false
}

func firstN(s []string, n int) string { return strings.Join(firstNList(s, n), "; ") }

func firstNList(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(append([]string{}, s[:n]...), fmt.Sprintf("... and %d more", len(s)-n))
}

// redisDo sends one command to the private Redis.
func redisDo(ctx context.Context, addr string, args ...any) error {
	c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return c.Do(ctx, args...).Err()
}
