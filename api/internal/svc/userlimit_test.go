package svc

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/api/gatekeys"
	"github.com/seckill/seckill/devkit/testenv"
)

func TestUserLimiterLocal(t *testing.T) {
	l := NewUserLimiter(2, 3, nil, gatekeys.Keys{})
	now := time.Unix(1_000_000, 0)
	l.now = func() time.Time { return now }
	ctx := context.Background()
	for i := range 3 {
		if ok, err := l.Allow(ctx, 1); !ok || err != nil {
			t.Fatalf("request %d: %v %v", i, ok, err)
		}
	}
	if ok, _ := l.Allow(ctx, 1); ok {
		t.Fatal("over quota allowed")
	}
	if ok, _ := l.Allow(ctx, 2); !ok {
		t.Fatal("another buyer limited")
	}
	now = now.Add(2 * time.Second) // the window (opened by the first request) closed
	if ok, _ := l.Allow(ctx, 1); !ok {
		t.Fatal("a new window still limited")
	}
	_, _ = l.Allow(ctx, 2+limiterShards) // same shard as buyer 2: sweeps it
	if n := len(l.shards[2%limiterShards].count); n != 1 {
		t.Fatalf("buyer 2's closed window kept (%d entries)", n)
	}
}

func TestUserLimiterConcurrentExactlyQuota(t *testing.T) {
	l := NewUserLimiter(60, 5, nil, gatekeys.Keys{})
	var ok atomic.Int64
	var wg sync.WaitGroup
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if a, _ := l.Allow(context.Background(), 42); a {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 5 {
		t.Fatalf("%d passed, want 5", ok.Load())
	}
}

// Addresses are counted in memory first (no Redis for what the local count refuses); with
// the shared limiter two gateways share an address's quota.
func TestAddrLimiterLocalThenShared(t *testing.T) {
	ctx := context.Background()
	local := NewAddrLimiter(60, 3, nil, gatekeys.Keys{})
	for i := range 3 {
		if ok, err := local.Allow(ctx, "10.0.0.1"); !ok || err != nil {
			t.Fatalf("request %d: %v %v", i, ok, err)
		}
	}
	if ok, _ := local.Allow(ctx, "10.0.0.1"); ok {
		t.Fatal("over quota allowed")
	}
	if ok, _ := local.Allow(ctx, "10.0.0.2"); !ok {
		t.Fatal("another address limited")
	}

	rds, keys := testenv.Redis(t)
	shared := func() *AddrLimiter {
		return NewAddrLimiter(60, 4, NewSharedCounts(rds), gatekeys.Keys{Prefix: keys.Prefix})
	}
	a, b := shared(), shared() // two gateways
	passed := 0
	for range 3 {
		for _, g := range []*AddrLimiter{a, b} {
			ok, err := g.Allow(ctx, "10.0.0.9")
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				passed++
			}
		}
	}
	if passed != 4 {
		t.Fatalf("%d of 6 passed across two gateways sharing a quota of 4", passed)
	}
}
