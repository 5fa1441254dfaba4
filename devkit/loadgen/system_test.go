package loadgen_test

import (
	"context"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/standalone"
	"github.com/seckill/seckill/devkit/testenv"
)

// startSystem starts the whole system in this process for a test (its own key prefix and
// database, Kafka in process, reconciliation every second), configure applied last; the
// context bounds the test at 3 minutes. Both end with the test; db is the system's database.
func startSystem(t *testing.T, configure func(c *standalone.Configs)) (
	sys *standalone.System, ctx context.Context, db *testenv.Database) {
	t.Helper()
	_, keys := testenv.Redis(t)
	redisAddr, err := testenv.RedisServer()
	if err != nil {
		t.Fatal(err)
	}
	db = testenv.MySQL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	sys, err = standalone.Start(ctx, standalone.Config{
		EtcDir: "../../etc", APIAddr: "127.0.0.1:0", RedisAddr: redisAddr, MySQLDSN: db.DSN, KeyPrefix: keys.Prefix,
		Configure: func(c *standalone.Configs) {
			c.Writer.Jobs.Reconcile.Interval = time.Second
			c.Gateway.DevServer.Enabled = false
			if configure != nil {
				configure(c)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sys.Close)
	return sys, ctx, db
}
