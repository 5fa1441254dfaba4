package stock_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/stock"
)

// failFirstLoad is a go-redis hook that fails the first SCRIPT LOAD it sees, as go-zero's
// breaker drops a call right after Redis came back, and counts every SCRIPT LOAD sent.
type failFirstLoad struct{ loads atomic.Int64 }

func (h *failFirstLoad) DialHook(next red.DialHook) red.DialHook { return next }

func (h *failFirstLoad) ProcessPipelineHook(next red.ProcessPipelineHook) red.ProcessPipelineHook {
	return next
}

func (h *failFirstLoad) ProcessHook(next red.ProcessHook) red.ProcessHook {
	return func(ctx context.Context, cmd red.Cmder) error {
		if !strings.EqualFold(cmd.Name(), "script") || len(cmd.Args()) < 2 ||
			!strings.EqualFold(cmd.Args()[1].(string), "load") {
			return next(ctx, cmd)
		}
		if h.loads.Add(1) == 1 {
			err := errors.New("dropped by the test")
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

// TestLoadScriptsGoesOnPastAFailure: one dropped SCRIPT LOAD does not stop the others, so each
// of the probe's reloads after a Redis restart makes progress. With the loop returning at its
// first error, the hook saw 1 load of ScriptCount.
func TestLoadScriptsGoesOnPastAFailure(t *testing.T) {
	addr := testenv.RedisAddr()
	// go-zero shares one client (and its hooks) per address in a process: this test's hook
	// needs an address of its own for the same server.
	alias := strings.Replace(addr, "127.0.0.1:", "localhost:", 1)
	if alias == addr {
		t.Fatalf("test Redis at %s: want 127.0.0.1:<port> to give this test its own client", addr)
	}
	hook := &failFirstLoad{}
	rds := redis.New(alias, redis.WithHook(hook))
	_, keys := testenv.Redis(t)
	err := stock.NewStore(rds, keys).LoadScripts(context.Background())
	if err == nil || !strings.Contains(err.Error(), "dropped by the test") {
		t.Fatalf("LoadScripts with one load dropped: %v, want that error", err)
	}
	if got := hook.loads.Load(); got != int64(stock.ScriptCount) {
		t.Fatalf("SCRIPT LOAD sent %d times for %d scripts: a dropped load stopped the rest", got, stock.ScriptCount)
	}
}
