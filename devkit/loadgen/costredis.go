package loadgen

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	red "github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/stock"
)

// RedisCost is Redis's memory over the sale.
type RedisCost struct {
	// UsedBefore: the reading (usedMemory: used_memory less the clients' buffers) before the
	// reserve phase, settled (settledMemory).
	UsedBefore   int64         `json:"used_memory_before"`
	AtCheckpoint *MemorySample `json:"at_checkpoint,omitempty"`
	// End: after the writer caught up (the relay has deleted what it moved to Kafka), or at
	// the reserve phase's end without the lag wait; no order is paid or released yet. Its
	// memory is read settled, as UsedBefore's; AtCheckpoint's is one reading amid the load.
	End *MemorySample `json:"at_end,omitempty"`
	// PerOrder is (End.Used - UsedBefore) ÷ End.Orders: every byte the sale added, per order.
	PerOrder float64 `json:"bytes_per_order"`
	// Keys: MEMORY USAGE (every element sampled) of the activity's keys at End, by kind.
	Keys []KeyCost `json:"keys,omitempty"`
	// BuyerFields: the buyers hash's fields by kind, h:<uid> (the holding) and
	// r<uid base 36>:<request_id> (stock.ReqField: the request's order's short number), with their field and value bytes.
	BuyerFields []FieldCost `json:"buyer_fields,omitempty"`
	Err         string      `json:"error,omitempty"`
}

// Growth is the reading's growth (used_memory less the clients' buffers) from before the
// reserve phase to End (0 before End).
func (rc *RedisCost) Growth() int64 {
	if rc.End == nil {
		return 0
	}
	return rc.End.Used - rc.UsedBefore
}

// MemorySample is one reading of Redis's memory.
type MemorySample struct {
	Orders int   `json:"orders"`         // reservations held when read
	Used   int64 `json:"used_memory"`    // INFO used_memory less mem_clients_normal (usedMemory)
	Keys   int64 `json:"keys,omitempty"` // DBSIZE
}

// KeyCost is one key's memory.
type KeyCost struct {
	Kind     string  `json:"kind"`
	Key      string  `json:"key"`
	Bytes    int64   `json:"bytes"`
	PerOrder float64 `json:"bytes_per_order"`
}

// FieldCost is a kind of field of a hash: how many and their bytes (field + value, what
// Redis stores besides its per-entry overhead).
type FieldCost struct {
	Kind   string `json:"kind"`
	Fields int    `json:"fields"`
	Bytes  int64  `json:"bytes"`
}

// activityKeys are the activity's keys whose memory grows with its orders.
func activityKeys(prefix string, aid int64) []KeyCost {
	k := stock.Keys{Prefix: prefix}
	return []KeyCost{
		{Kind: "orders hash", Key: k.OrdersHash(aid)},
		{Kind: "buyers hash (h: holdings, r: request ids)", Key: k.Buyers(aid)},
		{Kind: "pending zset", Key: k.Pending(aid)},
		{Kind: "outbox stream", Key: k.Events(aid)},
		{Kind: "stock hash", Key: k.Stock(aid)},
		{Kind: "trades hash", Key: k.Trades(aid)},
	}
}

// readRedisEnd reads Redis at the end: its memory settled, DBSIZE, each activity key's MEMORY
// USAGE and the buyers hash's fields by kind.
func readRedisEnd(ctx context.Context, rds *red.Client, rc *RedisCost, prefix string, aid int64, orders int) error {
	used, err := settledMemory(ctx, rds)
	if err != nil {
		return err
	}
	n, err := rds.DBSize(ctx).Result()
	if err != nil {
		return err
	}
	rc.End = &MemorySample{Orders: orders, Used: used, Keys: n}
	if orders > 0 {
		rc.PerOrder = float64(used-rc.UsedBefore) / float64(orders)
	}
	rc.Keys = activityKeys(prefix, aid)
	for i := range rc.Keys {
		b, err := rds.MemoryUsage(ctx, rc.Keys[i].Key, 0).Result()
		if err != nil && !errors.Is(err, red.Nil) {
			return fmt.Errorf("MEMORY USAGE %s: %w", rc.Keys[i].Key, err)
		}
		rc.Keys[i].Bytes = b
		if orders > 0 {
			rc.Keys[i].PerOrder = float64(b) / float64(orders)
		}
	}
	held, reqs, err := buyerFields(ctx, rds, stock.Keys{Prefix: prefix}.Buyers(aid))
	if err != nil {
		return err
	}
	rc.BuyerFields = []FieldCost{held, reqs}
	return nil
}

// reqPrefix starts every stock.ReqField; the buyers hash's other fields are holdings.
var reqPrefix = strings.TrimSuffix(stock.ReqField(0, "x"), "0:x")

// buyerFields walks the buyers hash (HSCAN) and sums its fields by kind.
func buyerFields(ctx context.Context, rds *red.Client, key string) (held, reqs FieldCost, err error) {
	held.Kind, reqs.Kind = "h:<uid>", "r<uid36>:<request_id>"
	var cursor uint64
	for {
		kv, next, err := rds.HScan(ctx, key, cursor, "", 2000).Result()
		if err != nil {
			return held, reqs, fmt.Errorf("HSCAN %s: %w", key, err)
		}
		for i := 0; i+1 < len(kv); i += 2 {
			fc := &held
			if strings.HasPrefix(kv[i], reqPrefix) {
				fc = &reqs
			}
			fc.Fields++
			fc.Bytes += int64(len(kv[i]) + len(kv[i+1]))
		}
		if cursor = next; cursor == 0 {
			return held, reqs, nil
		}
	}
}

// Settling: a reading of Redis's memory (before the reserve phase and at the end) is the
// median of settleSamples samples settleEvery apart, so that what comes and goes for a moment
// (a periodic job's transient allocations, seen at +20 to +100 KB for 100-200 ms) is not read.
const (
	settleSamples = 9
	settleEvery   = 100 * time.Millisecond
)

// settledMemory is the median of settleSamples memory samples settleEvery apart.
func settledMemory(ctx context.Context, rds *red.Client) (int64, error) {
	s := make([]int64, 0, settleSamples)
	for i := range settleSamples {
		if i > 0 {
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-time.After(settleEvery):
			}
		}
		m, err := usedMemory(ctx, rds)
		if err != nil {
			return 0, err
		}
		s = append(s, m)
	}
	return median(s), nil
}

// median is the middle of s (the upper of the two middles of an even count); it sorts s.
func median(s []int64) int64 {
	slices.Sort(s)
	return s[len(s)/2]
}

// usedMemory is INFO memory's used_memory less mem_clients_normal (bytes): what Redis holds
// besides its clients' buffers, which follow the connections and their traffic, not the data
// (they moved by up to 200 KB between two readings of an idle server).
func usedMemory(ctx context.Context, rds *red.Client) (int64, error) {
	info, err := rds.Info(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	return parseMemory(info)
}

// parseMemory reads used_memory - mem_clients_normal from INFO memory's text.
func parseMemory(info string) (int64, error) {
	var used, clients int64 = -1, -1
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (k != "used_memory" && k != "mem_clients_normal") {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("INFO memory %s: %w", k, err)
		}
		if k == "used_memory" {
			used = n
		} else {
			clients = n
		}
	}
	if used < 0 || clients < 0 {
		return 0, errors.New("INFO memory without used_memory or mem_clients_normal")
	}
	return used - clients, nil
}
