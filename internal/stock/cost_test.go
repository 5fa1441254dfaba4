package stock_test

import (
	"context"
	"testing"

	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/stocktest"
)

// TestScriptCostPerReservation logs the reservation script's Redis time per reservation
// (INFO commandstats, a private Redis) for batches of 1 (a single reservation), 32 and 128:
//
//	go test -tags no_k8s -run ScriptCost -v ./internal/stock/
func TestScriptCostPerReservation(t *testing.T) {
	rds, err := devenv.StartRedisPersist(context.Background(), devenv.PersistNone)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rds.Close() })
	for _, size := range []int{1, 32, 128, 1, 32, 128} {
		us, err := stocktest.ScriptCost(ctx, rds.Addr, "cost:", size, 4096)
		if err != nil {
			t.Fatal(err)
		}
		if us <= 0 {
			t.Fatalf("batch %d: %.2f µs per reservation: INFO commandstats counted nothing", size, us)
		}
		t.Logf("batch %3d: %.2f µs of Redis per reservation", size, us)
	}
}
