package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/devkit/benchrun"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
)

// driver makes reservations through stock.Store, as the inventory service does.
type driver struct {
	store *stock.Store
	raw   *red.Client
}

func newDriver(ctx context.Context, addr string, entries bool) (*driver, error) {
	logx.Disable() // every call under callgrind is a go-zero slow call
	var opts []stock.Option
	if entries {
		opts = append(opts, stock.WithEntries())
	}
	rds, err := redis.NewRedis(redis.RedisConf{Host: addr, Type: redis.NodeType})
	if err != nil {
		return nil, err
	}
	d := &driver{store: stock.NewStore(rds, stock.Keys{Prefix: "callgrind:"}, opts...),
		raw: red.NewClient(&red.Options{Addr: addr, DisableIdentity: true, ReadTimeout: time.Minute})}
	if err := d.store.LoadScripts(ctx); err != nil {
		_ = d.raw.Close()
		return nil, err
	}
	return d, nil
}

func (d *driver) close() { _ = d.raw.Close() }

// warm creates activity aid with stock for n reservations (one per buyer), live for an hour.
func (d *driver) warm(ctx context.Context, aid int64, n int) error {
	now := time.Now()
	created, _, err := d.store.Warmup(ctx, domain.Activity{ActivityID: aid, SkuID: 7, Name: "callgrind",
		Counters: domain.Counters{Total: int64(n), Remaining: int64(n)}, Start: now.Unix() - 60, End: now.Unix() + 3600,
		Limit: 1, PayTimeout: 900, ExpireAt: now.Unix() + 7200})
	if err == nil && !created {
		err = fmt.Errorf("activity %d is warm already", aid)
	}
	return err
}

// reserve makes reservations from..from+n-1 (buyer i+1, request id cg-<i>) in batches of
// size, one batch at a time; each must be made.
func (d *driver) reserve(ctx context.Context, aid int64, from, n, size int) error {
	items := make([]domain.ReserveItem, 0, size)
	for i := from; i < from+n; {
		items = items[:0]
		for ; len(items) < size && i < from+n; i++ {
			items = append(items, domain.ReserveItem{UID: int64(i) + 1, Qty: 1, RequestID: fmt.Sprintf("cg-%08d", i)})
		}
		res, err := d.store.ReserveBatch(ctx, aid, items, time.Time{})
		if err != nil {
			return err
		}
		for j, r := range res {
			if r.Err != nil || r.Replay {
				return fmt.Errorf("reservation %d: %+v", i-len(items)+j, r)
			}
		}
	}
	return nil
}

// commands are INFO commandstats' calls by command.
func (d *driver) commands(ctx context.Context) (map[string]int64, error) {
	info, err := d.raw.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	stats, err := benchrun.ParseCommandStats(info)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for name, s := range stats {
		out[name] = s.Calls
	}
	return out, nil
}

// report prints r.
func report(w io.Writer, r Result) {
	fmt.Fprintf(w, "\nbatches of %d: %d instructions for %d reservations: %.0f per reservation\n",
		r.Size, r.Total, r.N, r.PerReservation())
	names := make([]string, 0, len(r.Commands))
	for name := range r.Commands {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(r.Commands[b], r.Commands[a]), cmp.Compare(a, b))
	})
	fmt.Fprintf(w, "  commands per reservation:")
	for _, name := range names {
		fmt.Fprintf(w, " %s %.3f", name, float64(r.Commands[name])/float64(r.N))
	}
	fmt.Fprintf(w, "\n  %12s %6s  %s\n", "Ir/resv", "share", "function (own instructions; object:name)")
	for _, f := range r.Top {
		fmt.Fprintf(w, "  %12.0f %5.1f%%  %s\n", float64(f.Ir)/float64(r.N), 100*float64(f.Ir)/float64(r.Total), f.Name)
	}
	fmt.Fprintf(w, "  dump: %s\n", r.File)
}
