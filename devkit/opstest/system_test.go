package opstest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/loadgen"
	"github.com/seckill/seckill/devkit/standalone"
	"github.com/seckill/seckill/devkit/testenv"
)

// startSystem runs the whole system in this process on the test Redis (own key prefix)
// and a fresh database, with Kafka in process, and jobs ticking fast enough for a test.
//
// go-zero starts one DevServer (metrics) per process: only a test that reads the metrics
// asks for it (metrics true), so that it is that test's system that serves them.
func startSystem(t *testing.T, metrics bool) *standalone.System {
	t.Helper()
	_, keys := testenv.Redis(t)
	redisAddr, err := testenv.RedisServer()
	if err != nil {
		t.Fatal(err)
	}
	db := testenv.MySQL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sys, err := standalone.Start(ctx, standalone.Config{
		EtcDir: "../../etc", APIAddr: "127.0.0.1:0", RedisAddr: redisAddr, MySQLDSN: db.DSN,
		KeyPrefix: keys.Prefix, KafkaPartitions: 4,
		Configure: func(c *standalone.Configs) {
			c.Writer.Jobs.Books.Interval = 500 * time.Millisecond
			c.Writer.Jobs.Reconcile.Interval = time.Second
			c.Writer.Writer.LagInterval = time.Second
			c.Writer.Probe.Interval = time.Second
			c.Inventory.Probe.Interval = time.Second
			c.Gateway.DevServer.Enabled = metrics
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sys.Close)
	return sys
}

// smallSale runs the load generator's sale (loopback, bounded): 200 buyers for 20 units,
// half paid, a quarter cancelled, the rest expire; it waits for reconciliation.
func smallSale(t *testing.T, sys *standalone.System) *loadgen.Report {
	t.Helper()
	var progress strings.Builder
	r, err := loadgen.Run(context.Background(), loadgen.Config{
		BaseURL: sys.APIURL, BuyerSecret: sys.BuyerSecret, MerchantSecret: sys.MerchantSecret,
		Buyers: 200, Concurrency: 8, Stock: 20, MaxDuration: 10 * time.Second,
		PayTimeout: 3 * time.Second, PayFraction: 0.5, CancelFraction: 0.25,
		ReconcileWait: 30 * time.Second, Progress: &progress,
	})
	if err != nil {
		t.Fatalf("sale: %v\n%s", err, progress.String())
	}
	if !r.OK() || r.Reconcile != "consistent" {
		var text strings.Builder
		r.WriteText(&text)
		t.Fatalf("sale failed:\n%s", text.String())
	}
	return r
}
