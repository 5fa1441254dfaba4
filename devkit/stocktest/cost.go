package stocktest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/internal/stock"
)

// ScriptCost is the reservation script's Redis time per reservation (µs): it warms a fresh
// activity on the Redis at addr (keys under prefix), runs n reservations of distinct buyers in
// batches of size, and divides the growth of EVALSHA's usec in INFO commandstats by n. The
// Redis should be one no one else runs scripts on (a private one), or their time counts too.
func ScriptCost(ctx context.Context, addr, prefix string, size, n int) (float64, error) {
	if size < 1 || size > stock.MaxReserveBatch || n < size {
		return 0, fmt.Errorf("script cost: batch %d of %d reservations", size, n)
	}
	raw := red.NewClient(&red.Options{Addr: addr, DisableIdentity: true})
	defer raw.Close()
	st := stock.NewStore(redis.New(addr), stock.Keys{Prefix: prefix})
	if err := st.LoadScripts(ctx); err != nil {
		return 0, err
	}
	now := time.Now()
	aid := now.UnixNano()%1_000_000_000 + 1
	if _, _, err := st.Warmup(ctx, stock.Meta{ActivityID: aid, SkuID: 7, Name: "cost", Total: int64(n),
		Remaining: int64(n), Start: now.Unix() - 60, End: now.Unix() + 3600, Limit: 1, PayTimeout: 900,
		ExpireAt: now.Unix() + 7200}); err != nil {
		return 0, err
	}
	before, err := evalshaUsec(ctx, raw)
	if err != nil {
		return 0, err
	}
	items := make([]stock.ReserveItem, 0, size)
	for done := 0; done < n; {
		items = items[:0]
		for ; len(items) < size && done < n; done++ {
			items = append(items, stock.ReserveItem{UID: int64(done + 1), Qty: 1, RequestID: fmt.Sprintf("cost-%08d", done)})
		}
		res, err := st.ReserveBatch(ctx, aid, items, time.Time{})
		if err != nil {
			return 0, err
		}
		for _, r := range res {
			if r.Err != nil {
				return 0, fmt.Errorf("script cost: a reservation failed: %w", r.Err)
			}
		}
	}
	after, err := evalshaUsec(ctx, raw)
	if err != nil {
		return 0, err
	}
	return float64(after-before) / float64(n), nil
}

// evalshaUsec is EVALSHA's total usec in INFO commandstats (0 before the first call).
func evalshaUsec(ctx context.Context, raw *red.Client) (int64, error) {
	info, err := raw.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_evalsha:")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "usec="); ok {
				return strconv.ParseInt(v, 10, 64)
			}
		}
	}
	return 0, nil
}
