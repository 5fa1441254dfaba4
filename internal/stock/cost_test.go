package stock_test

import (
	"context"
	"testing"

	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/stocktest"
)

// TestScriptCostPerReservation logs the reservation script's Redis time per reservation
// and its commands (INFO commandstats, a private Redis) for batches of 1 (a single reservation), 32 and 128:
//
//	go test -tags no_k8s -run ScriptCost -v ./internal/stock/
func TestScriptCostPerReservation(t *testing.T) {
	rds, err := devenv.StartRedisPersist(context.Background(), devenv.PersistNone)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rds.Close() })
	for _, size := range []int{1, 32, 128, 1, 32, 128} {
		c, err := stocktest.ScriptCost(ctx, rds.Addr, "cost:", size, 4096)
		if err != nil {
			t.Fatal(err)
		}
		if c.Micros <= 0 || c.Commands < 1 {
			t.Fatalf("batch %d: %+v per reservation: INFO commandstats counted nothing", size, c)
		}
		t.Logf("batch %3d: %.2f µs of Redis and %.2f commands per reservation; %.0f bytes kept per order "+
			"(and %.0f of outbox until relayed)", size, c.Micros, c.Commands, c.Bytes, c.OutboxBytes)
	}
}
