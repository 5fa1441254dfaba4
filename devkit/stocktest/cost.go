package stocktest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
)

// Cost is what the reservation script costs Redis per reservation.
type Cost struct {
	Micros   float64 // EVALSHA's usec per reservation
	Commands float64 // commands the script ran (redis.call) per reservation
	// Bytes is the growth of Redis's used_memory per reservation, the outbox's entries left
	// out (the relay deletes them once Kafka has them): what an order keeps in Redis.
	Bytes float64
	// OutboxBytes is the outbox stream's used_memory per reservation (MEMORY USAGE).
	OutboxBytes float64
}

// ScriptCost is the reservation script's Redis cost per reservation: it warms a fresh activity on
// the Redis at addr (keys under prefix), runs n reservations of distinct buyers in batches of
// size, and divides the growth of INFO commandstats by n. The Redis should be one no one else
// uses (a private one), or their commands count too.
func ScriptCost(ctx context.Context, addr, prefix string, size, n int) (Cost, error) {
	if size < 1 || size > stock.MaxReserveBatch || n < size {
		return Cost{}, fmt.Errorf("script cost: batch %d of %d reservations", size, n)
	}
	raw := red.NewClient(&red.Options{Addr: addr, DisableIdentity: true})
	defer raw.Close()
	st := stock.NewStore(redis.New(addr), stock.Keys{Prefix: prefix})
	if err := st.LoadScripts(ctx); err != nil {
		return Cost{}, err
	}
	now := time.Now()
	aid := now.UnixNano()%1_000_000_000 + 1
	if _, _, err := st.Warmup(ctx, domain.Activity{ActivityID: aid, SkuID: 7, Name: "cost",
		Counters: domain.Counters{Total: int64(n), Remaining: int64(n)}, Start: now.Unix() - 60, End: now.Unix() + 3600,
		Limit: 1, PayTimeout: 900,
		ExpireAt: now.Unix() + 7200}); err != nil {
		return Cost{}, err
	}
	before, err := commandStats(ctx, raw)
	if err != nil {
		return Cost{}, err
	}
	mem0, err := usedMemory(ctx, raw)
	if err != nil {
		return Cost{}, err
	}
	items := make([]domain.ReserveItem, 0, size)
	for done := 0; done < n; {
		items = items[:0]
		for ; len(items) < size && done < n; done++ {
			items = append(items, domain.ReserveItem{UID: int64(done + 1), Qty: 1, RequestID: fmt.Sprintf("cost-%08d", done)})
		}
		res, err := st.ReserveBatch(ctx, aid, items, time.Time{})
		if err != nil {
			return Cost{}, err
		}
		for _, r := range res {
			if r.Err != nil {
				return Cost{}, fmt.Errorf("script cost: a reservation failed: %w", r.Err)
			}
		}
	}
	after, err := commandStats(ctx, raw)
	if err != nil {
		return Cost{}, err
	}
	c := Cost{Micros: float64(after.usec-before.usec) / float64(n),
		Commands: float64(after.inner-before.inner) / float64(n)}
	events := stock.Keys{Prefix: prefix}.Events(aid)
	outbox, err := raw.MemoryUsage(ctx, events, 0).Result()
	if err != nil && !errors.Is(err, red.Nil) {
		return Cost{}, fmt.Errorf("MEMORY USAGE of the outbox: %w", err)
	}
	if err := raw.Del(ctx, events).Err(); err != nil {
		return Cost{}, err
	}
	mem1, err := usedMemory(ctx, raw)
	if err != nil {
		return Cost{}, err
	}
	c.Bytes, c.OutboxBytes = float64(mem1-mem0)/float64(n), float64(outbox)/float64(n)
	return c, nil
}

// usedMemory is INFO memory's used_memory (bytes).
func usedMemory(ctx context.Context, raw *red.Client) (int64, error) {
	info, err := raw.Info(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("INFO memory without used_memory")
}

// stats is EVALSHA's total usec and the calls of every other command but INFO.
type stats struct{ usec, inner int64 }

// commandStats reads INFO commandstats.
func commandStats(ctx context.Context, raw *red.Client) (stats, error) {
	info, err := raw.Info(ctx, "commandstats").Result()
	if err != nil {
		return stats{}, err
	}
	var st stats
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "cmdstat_"), ":")
		if !ok || name == "info" || name == "script|load" {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch {
			case k == "usec" && name == "evalsha":
				st.usec = n
			case k == "calls" && name != "evalsha":
				st.inner += n
			}
		}
	}
	return st, nil
}
