package stock_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
)

// TestScriptsOnRedisCluster runs every script against a real 3-master Redis Cluster:
// the hash tag keeps each activity's keys in one slot, so no script meets CROSSSLOT.
func TestScriptsOnRedisCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three redis-servers")
	}
	st := clusterStore(t)
	// Activities whose tags land on different masters.
	for aid := int64(1); aid <= 3; aid++ {
		t.Run(fmt.Sprint("activity ", aid), func(t *testing.T) {
			_, _, err := st.Warmup(ctx, domain.Activity{ActivityID: aid, SkuID: 1, Name: "c",
				Counters: domain.Counters{Total: 50, Remaining: 50}, Start: time.Now().Unix() - 60,
				End: time.Now().Unix() + 3600, Limit: 1, PayTimeout: 1,
				ExpireAt: time.Now().Unix() + 7200})
			if err != nil {
				t.Fatal(err)
			}
			var ok, soldOut atomic.Int64
			race(200, func(i int) {
				_, err := stocktest.Reserve(ctx, st, aid, int64(i+1), 1, reqID(i))
				switch {
				case err == nil:
					ok.Add(1)
				case xerr.CodeOf(err) == xerr.SoldOut:
					soldOut.Add(1)
				default:
					t.Error(err)
				}
			})
			if ok.Load() != 50 || soldOut.Load() != 150 {
				t.Fatalf("ok %d sold out %d", ok.Load(), soldOut.Load())
			}
			orders, err := stocktest.OrderNos(ctx, st, aid)
			if err != nil || len(orders) != 50 {
				t.Fatalf("orders %d %v", len(orders), err)
			}
			owner := func(no string) int64 {
				o, err := st.Order(ctx, no)
				if err != nil {
					t.Fatal(err)
				}
				return o.UID
			}
			if _, err := st.Confirm(ctx, orders[0], owner(orders[0])); err != nil {
				t.Fatal(err)
			}
			// A replay reads the replayed order's hash (same slot) inside the script.
			first, err := st.Order(ctx, orders[0])
			if err != nil {
				t.Fatal(err)
			}
			r, err := stocktest.Reserve(ctx, st, aid, first.UID, 1, first.RequestID)
			if err != nil || !r.Replay || r.State != "paid" || r.OrderNo != orders[0] {
				t.Fatalf("replay on the cluster: %+v %v", r, err)
			}
			if _, err := st.Release(ctx, orders[1], owner(orders[1]), domain.StateCancelled); err != nil {
				t.Fatal(err)
			}
			if _, _, err := st.Adjust(ctx, aid, 5, "", ""); err != nil {
				t.Fatal(err)
			}
			time.Sleep(1100 * time.Millisecond)
			done, err := st.ExpireDue(ctx, aid, 100)
			if err != nil || len(done) != 48 {
				t.Fatalf("expired %d %v", len(done), err)
			}
			snap, err := st.Stock(ctx, aid)
			if err != nil || snap.Total != 55 || snap.Sold != 1 || snap.Locked != 0 || snap.Remaining != 54 {
				t.Fatalf("stock %+v %v", snap, err)
			}
		})
	}
}

// clusterStore is a store on a new 3-master Redis Cluster, its scripts loaded.
func clusterStore(t *testing.T) *stock.Store {
	t.Helper()
	testenv.Need(t, devenv.RedisPackage)
	cl, err := devenv.StartRedisCluster(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	rds, err := redis.NewRedis(redis.RedisConf{Host: cl.Addrs()[0], Type: redis.ClusterType,
		DisableIdentity: true, NonBlock: true})
	if err != nil {
		t.Fatal(err)
	}
	st := stock.NewStore(rds, stock.Keys{})
	if err := st.LoadScripts(ctx); err != nil {
		t.Fatal(err)
	}
	return st
}
