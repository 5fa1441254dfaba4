package stock_test

import (
	"context"
	"testing"

	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/stocktest"
)

// TestScriptCostPerReservation logs the reservation script's Redis time per reservation,
// its commands (INFO commandstats, a private Redis) and the memory an order keeps, for batches
// of 1 (a single reservation), 32 and 128:
//
//	go test -tags no_k8s -run ScriptCost -v ./internal/stock/
//
// The time is too noisy on shared cores to bound; the layout is bounded: in a batch, a new
// reservation runs no command of its own (the batch's one XADD and the rest are per batch: at
// most 10), and an order keeps at most 290 B (264-278 B in batches with its numbers in base 36 and
// its state one letter, 311-314 B before; about 445 B with the whole order number in the keys,
// 850 B as a hash of its own: docs/DESIGN.md, "Redis keys").
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
		if c.Micros <= 0 || c.Commands <= 0 {
			t.Fatalf("batch %d: %+v per reservation: INFO commandstats counted nothing", size, c)
		}
		t.Logf("batch %3d: %.2f µs of Redis and %.2f commands per reservation; %.0f bytes kept per order "+
			"(and %.0f of outbox until relayed)", size, c.Micros, c.Commands, c.Bytes, c.OutboxBytes)
		if size > 1 && (c.Commands > 10.0/float64(size) || c.Bytes > 290) {
			t.Errorf("batch %d: %.2f commands and %.0f bytes per reservation; want at most 10 per batch and "+
				"290 bytes", size, c.Commands, c.Bytes)
		}
	}
}
