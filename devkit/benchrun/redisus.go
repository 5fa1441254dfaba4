package benchrun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
)

// redisUSLabel is the row of Redis time per reservation.
const redisUSLabel = "redis us per reservation"

// CmdStat is one command's line of INFO commandstats.
type CmdStat struct {
	Calls int64
	Usec  int64
}

// ParseCommandStats reads INFO commandstats ("cmdstat_evalsha:calls=3,usec=54,...") into
// counts by command name (lower case, without the cmdstat_ prefix).
func ParseCommandStats(info string) (map[string]CmdStat, error) {
	out := map[string]CmdStat{}
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		name, fields, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		var st CmdStat
		seen := 0
		for _, f := range strings.Split(fields, ",") {
			k, v, _ := strings.Cut(f, "=")
			var dst *int64
			switch k {
			case "calls":
				dst = &st.Calls
			case "usec":
				dst = &st.Usec
			default:
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("commandstats line %q: %s: %w", line, k, err)
			}
			*dst = n
			seen++
		}
		if seen != 2 {
			return nil, fmt.Errorf("commandstats line %q: no calls or usec", line)
		}
		out[strings.ToLower(strings.TrimPrefix(name, "cmdstat_"))] = st
	}
	return out, nil
}

// scriptCommands run a Lua script: their time is the reservation script's (go-zero falls
// back from EVALSHA to EVAL on NOSCRIPT).
var scriptCommands = []string{"evalsha", "eval", "evalsha_ro", "eval_ro", "fcall", "fcall_ro"}

// ScriptTime is the calls and usec of every script command in stats.
func ScriptTime(stats map[string]CmdStat) CmdStat {
	var t CmdStat
	for _, c := range scriptCommands {
		t.Calls += stats[c].Calls
		t.Usec += stats[c].Usec
	}
	return t
}

// redisUS measures Redis time per reservation on one Redis.
type redisUS struct {
	raw   *red.Client
	store *stock.Store
	n     int // reservations per measurement
}

// redisRow is the "redis us per reservation" row: Redis's own time (INFO commandstats,
// after CONFIG RESETSTAT) per reservation made by stock.Store.ReserveBatch, in batches of
// c.RedisBatch beside batches of one, on a private redis-server (nothing else's scripts in
// its counters). Lower is better: the rate is µs per reservation.
func redisRow(ctx context.Context, c *Config, fallback string, logf func(string, ...any), notes *[]string) Row {
	row := Row{Label: redisUSLabel,
		Subject:  Measurement{Name: fmt.Sprintf("Redis time per reservation, batches of %d", c.RedisBatch), Unit: "µs"},
		Baseline: Measurement{Name: "Redis time per reservation, batches of 1", Unit: "µs"}}
	addr, where := fallback, "the system's Redis (a private redis-server did not start: its background scripts count too)"
	if p, err := devenv.StartRedis(ctx); err == nil {
		defer p.Close()
		addr, where = p.Addr, "a private redis-server (no other client)"
	} else {
		logf("redis us per reservation: private redis-server: %v", err)
	}
	m, err := newRedisUS(ctx, addr, c.RedisN)
	if err != nil {
		row.Error = err.Error()
		return row
	}
	defer m.raw.Close()
	*notes = append(*notes, fmt.Sprintf("%s: stock.Store.ReserveBatch on %s, %d reservations per measurement, "+
		"CONFIG RESETSTAT before each, then INFO commandstats: the script commands' usec / reservations made "+
		"(lower is better; the ratio is the batch's µs / one item's µs); also batches of %d in the subject's metrics",
		redisUSLabel, where, c.RedisN, 2*c.RedisBatch))
	var rounds []Row
	for round := range c.Rounds {
		logf("redis us per reservation: batches of 1, %d and %d (round %d of %d)", c.RedisBatch, 2*c.RedisBatch, round+1,
			c.Rounds)
		r := row
		var err error
		if r.Baseline, err = m.measure(ctx, r.Baseline, 1); err == nil {
			r.Subject, err = m.measure(ctx, r.Subject, c.RedisBatch)
		}
		var twice Measurement
		if err == nil {
			twice, err = m.measure(ctx, Measurement{}, 2*c.RedisBatch)
		}
		if err != nil {
			r.Error = err.Error()
			return r
		}
		r.Subject.Metrics[fmt.Sprintf("us/reservation at batch %d", 2*c.RedisBatch)] = twice.Rate
		r.compute()
		r.P99Ratio = 0
		rounds = append(rounds, r)
		if ctx.Err() != nil {
			break
		}
	}
	return medianRow(rounds)
}

func newRedisUS(ctx context.Context, addr string, n int) (*redisUS, error) {
	rds, err := redis.NewRedis(redis.RedisConf{Host: addr, Type: redis.NodeType})
	if err != nil {
		return nil, err
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	store := stock.NewStore(rds, stock.Keys{Prefix: "bench-redis-us-" + hex.EncodeToString(b[:]) + ":"})
	if err := store.LoadScripts(ctx); err != nil {
		return nil, err
	}
	return &redisUS{raw: red.NewClient(&red.Options{Addr: addr, DisableIdentity: true}), store: store, n: n}, nil
}

// measure makes m.n reservations (distinct buyers, ample stock) in batches of size on a
// fresh activity and fills m with Redis's time per reservation made.
func (u *redisUS) measure(ctx context.Context, m Measurement, size int) (Measurement, error) {
	aid, err := u.warm(ctx)
	if err != nil {
		return m, err
	}
	if err := u.raw.ConfigResetStat(ctx).Err(); err != nil {
		return m, fmt.Errorf("CONFIG RESETSTAT: %w", err)
	}
	start := time.Now()
	made, err := u.reserve(ctx, aid, size)
	elapsed := time.Since(start)
	if err != nil {
		return m, err
	}
	info, err := u.raw.Info(ctx, "commandstats").Result()
	if err != nil {
		return m, fmt.Errorf("INFO commandstats: %w", err)
	}
	stats, err := ParseCommandStats(info)
	if err != nil {
		return m, err
	}
	t := ScriptTime(stats)
	if made == 0 || t.Calls == 0 {
		return m, fmt.Errorf("batches of %d: %d reservations, %d script calls", size, made, t.Calls)
	}
	batches := (u.n + size - 1) / size
	m.Count, m.Elapsed = int(made), elapsed
	m.Rate = float64(t.Usec) / float64(made)
	m.Metrics = map[string]float64{"batch": float64(size), "script calls": float64(t.Calls),
		"script usec": float64(t.Usec), "script calls per batch": float64(t.Calls) / float64(batches)}
	return m, nil
}

// warm creates an activity with stock for every reservation of a measurement.
func (u *redisUS) warm(ctx context.Context) (int64, error) {
	now := time.Now()
	aid := now.UnixNano()%1_000_000_000 + 1
	created, _, err := u.store.Warmup(ctx, domain.Activity{ActivityID: aid, SkuID: 1, Name: "bench redis us",
		Counters: domain.Counters{Total: int64(u.n), Remaining: int64(u.n)}, Start: now.Add(-time.Minute).Unix(),
		End: now.Add(time.Hour).Unix(), Limit: 1, PayTimeout: 900, ExpireAt: now.Add(2 * time.Hour).Unix()})
	if err == nil && !created {
		err = errors.New("its stock hash already exists")
	}
	if err != nil {
		return 0, fmt.Errorf("warm activity %d: %w", aid, err)
	}
	return aid, nil
}

// reserve sends the n reservations in batches of size from 4 clients; every item must
// succeed. It returns how many reservations were made.
func (u *redisUS) reserve(ctx context.Context, aid int64, size int) (int64, error) {
	var (
		next, made atomic.Int64
		wg         sync.WaitGroup
		mu         sync.Mutex
		first      error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
		}
	}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				from := int(next.Add(int64(size))) - size
				if from >= u.n || ctx.Err() != nil {
					return
				}
				items := make([]domain.ReserveItem, 0, size)
				for i := from; i < min(from+size, u.n); i++ {
					items = append(items, domain.ReserveItem{UID: int64(i) + 1, Qty: 1, RequestID: fmt.Sprintf("bench-us-%d", i)})
				}
				res, err := u.store.ReserveBatch(ctx, aid, items, time.Time{})
				if err != nil {
					fail(fmt.Errorf("ReserveBatch of %d: %w", size, err))
					return
				}
				for i, r := range res {
					if r.Err != nil || r.Replay || r.OrderNo == "" {
						fail(fmt.Errorf("ReserveBatch of %d, item %d: %+v", size, i, r))
						return
					}
					made.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return made.Load(), first
}
