package loadgen_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/loadgen"
	"github.com/seckill/seckill/devkit/standalone"
	"github.com/seckill/seckill/devkit/testenv"
)

// The cost readings against the whole system in this process on a Redis of its own (so
// used_memory is the sale's): Redis's growth per order and the activity's keys by kind, the
// buyers hash's fields one h: and one r: per order, this process's RSS at the checkpoint and
// the end, and the writer caught up after the reserve phase.
func TestRunCostAgainstTheSystem(t *testing.T) {
	testenv.Need(t, devenv.RedisPackage)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rds, err := devenv.StartRedisPersist(ctx, devenv.PersistNone)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rds.Close() })
	db := testenv.MySQL(t)
	sys, err := standalone.Start(ctx, standalone.Config{EtcDir: "../../etc", APIAddr: "127.0.0.1:0",
		RedisAddr: rds.Addr, MySQLDSN: db.DSN, KeyPrefix: "cost:", Configure: func(c *standalone.Configs) {
			c.Writer.Jobs.Reconcile.Interval = time.Second
			c.Gateway.DevServer.Enabled = false
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sys.Close)
	const buyers, stock = 1200, 400
	r, err := loadgen.Run(ctx, loadgen.Config{
		BaseURL: sys.APIURL, BuyerSecret: sys.BuyerSecret, MerchantSecret: sys.MerchantSecret,
		PaymentSecret: sys.PaymentSecret, Buyers: buyers, Concurrency: 16, Stock: stock, MaxDuration: 60 * time.Second,
		PayTimeout: 300 * time.Second, PayFraction: 1, ReconcileWait: 60 * time.Second, Seed: 3,
		Cost: loadgen.CostConfig{RedisAddr: rds.Addr, KeyPrefix: "cost:", PIDs: []int{os.Getpid()},
			Checkpoint: 200, LagWait: 30 * time.Second, MaxBytesPerOrder: 5000},
	})
	var text strings.Builder
	if r != nil {
		r.WriteText(&text)
	}
	if err != nil || !r.OK() || r.Cost == nil || r.Cost.Redis == nil {
		t.Fatalf("run: %v\n%s", err, text.String())
	}
	c := r.Cost
	rc := c.Redis
	t.Logf("redis: before %d, at the checkpoint %+v, at the end %+v, per order %.0f B", rc.UsedBefore, rc.AtCheckpoint,
		rc.End, rc.PerOrder)
	// An order is a field of the orders hash (its 12-character short number and its packed value,
	// about 60 bytes), two fields of the buyers hash and a share of a pending member: a few hundred
	// bytes; the orders hash's share is about 70 B here (its 400 fields fit a listpack: Redis's
	// hash-max-listpack-entries is 512), about 115 B in a hash table. Over 400 orders the reading
	// also carries what the sale adds once, outside the activity's keys and the clients' buffers
	// (≈ 355 KB, most of it there at the checkpoint's 200 orders), so it reads ≈ 1,140 B, of
	// which the keys ≈ 255 B. Unsettled (one reading each, client buffers in) it read 1 to
	// 808 B (docs/DESIGN.md "Measuring").
	if rc.End.Orders != stock || rc.PerOrder < 150 || rc.PerOrder > 2000 || rc.AtCheckpoint == nil {
		t.Errorf("redis: %+v, per order %.0f\n%s", rc.End, rc.PerOrder, text.String())
	}
	byKind := map[string]loadgen.KeyCost{}
	for _, k := range rc.Keys {
		byKind[k.Kind] = k
	}
	if o := byKind["orders hash"]; o.PerOrder < 40 || o.PerOrder > 400 || !strings.HasPrefix(o.Key, "cost:") {
		t.Errorf("orders hash %+v", o)
	}
	if len(rc.BuyerFields) != 2 || rc.BuyerFields[0].Fields != stock || rc.BuyerFields[1].Fields != stock ||
		rc.BuyerFields[1].Bytes <= rc.BuyerFields[0].Bytes {
		t.Errorf("buyer fields %+v", rc.BuyerFields)
	}
	if len(c.Processes) != 2 || c.Processes[0].At == nil || c.Processes[0].At.Buyers != 200 ||
		c.Processes[0].End == nil || c.Processes[0].End.Buyers != buyers || c.Reached != buyers {
		t.Errorf("processes %+v, reached %d", c.Processes, c.Reached)
	}
	if w := c.WriterLag; w == nil || !w.CaughtUp || w.DB != w.Redis || w.Redis.Locked != stock {
		t.Errorf("writer lag %+v", w)
	}
}
