package svc

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/stores/redis"
	"go.opentelemetry.io/otel"

	"github.com/seckill/seckill/api/gatekeys"
	"github.com/seckill/seckill/api/internal/coalesce"
	"github.com/seckill/seckill/devkit/testenv"
)

// countedSends is s with its pipelines counted.
func countedSends(s *SharedCounts) *atomic.Int64 {
	var n atomic.Int64
	s.group = coalesce.NewGroup(sharedCountsInFlight, sharedCountsBatch, coalesce.Metrics{},
		func(ctx context.Context, k int64, takes []take) ([]int64, error) {
			n.Add(1)
			return s.send(ctx, k, takes)
		})
	return &n
}

// TestSharedCountsExactlyQuota: buyers released together through two gateways' counts, on
// many keys at once, are allowed exactly the quota of each key, in fewer pipelines than takes.
func TestSharedCountsExactlyQuota(t *testing.T) {
	rds, keys := testenv.Redis(t)
	a, b := NewSharedCounts(rds), NewSharedCounts(rds) // two gateways
	sends := []*atomic.Int64{countedSends(a), countedSends(b)}
	const nkeys, perKey, quota = 60, 12, 5
	var allowed [nkeys]atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for k := range nkeys {
		for i := range perKey {
			g := []*SharedCounts{a, b}[i%2]
			wg.Go(func() {
				<-start
				ok, err := g.Take(context.Background(), gatekeys.Keys{Prefix: keys.Prefix}.RateLimit(int64(k)), 60, quota)
				if err != nil {
					t.Error(err)
				}
				if ok {
					allowed[k].Add(1)
				}
			})
		}
	}
	close(start)
	wg.Wait()
	for k := range nkeys {
		if n := allowed[k].Load(); n != quota {
			t.Errorf("key %d: %d of %d allowed, quota %d", k, n, perKey, quota)
		}
	}
	if n := sends[0].Load() + sends[1].Load(); n >= nkeys*perKey {
		t.Errorf("%d pipelines for %d takes: not coalesced", n, nkeys*perKey)
	} else {
		t.Logf("%d takes in %d pipelines", nkeys*perKey, n)
	}
}

// TestSharedCountsWindow: the first take opens the key's window of period seconds, later ones
// do not move it, a key left without one gets it, and a new window counts from zero.
func TestSharedCountsWindow(t *testing.T) {
	rds, keys := testenv.Redis(t)
	s := NewSharedCounts(rds)
	ctx := context.Background()
	key := gatekeys.Keys{Prefix: keys.Prefix}.RateLimitAddr("reserve", "10.0.0.1")
	if ok, err := s.Take(ctx, key, 100, 2); !ok || err != nil {
		t.Fatalf("first take: %v %v", ok, err)
	}
	ttl, err := rds.TtlCtx(ctx, key)
	if err != nil || ttl <= 90 || ttl > 100 {
		t.Fatalf("TTL after the first take %d (%v), want the period", ttl, err)
	}
	if err := rds.ExpireCtx(ctx, key, 50); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Take(ctx, key, 100, 2); !ok {
		t.Fatal("second take refused at quota 2")
	}
	if ttl, _ := rds.TtlCtx(ctx, key); ttl > 50 {
		t.Errorf("a later take moved the window: TTL %d", ttl)
	}
	if ok, _ := s.Take(ctx, key, 100, 2); ok {
		t.Fatal("third take allowed at quota 2")
	}
	bare := gatekeys.Keys{Prefix: keys.Prefix}.RateLimit(7)
	if _, err := rds.IncrCtx(ctx, bare); err != nil { // a count whose EXPIRE was lost
		t.Fatal(err)
	}
	if _, err := s.Take(ctx, bare, 30, 5); err != nil {
		t.Fatal(err)
	}
	if ttl, _ := rds.TtlCtx(ctx, bare); ttl <= 0 || ttl > 30 {
		t.Errorf("a count without a window kept none: TTL %d", ttl)
	}
	if err := rds.ExpireCtx(ctx, key, 1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	if ok, _ := s.Take(ctx, key, 100, 2); !ok {
		t.Error("a new window still refused")
	}
}

// TestSharedCountsRedisDown: a count that cannot be made is an error, allowed (the caller's
// failure policy decides).
func TestSharedCountsRedisDown(t *testing.T) {
	rds := redis.MustNewRedis(redis.RedisConf{Host: "127.0.0.1:1", Type: redis.NodeType, NonBlock: true})
	s := NewSharedCounts(rds)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ok, err := s.Take(ctx, fmt.Sprintf("sk:rl:down:%d", time.Now().UnixNano()), 1, 1)
	if err == nil || !ok {
		t.Fatalf("Redis down: %v %v, want allowed with an error", ok, err)
	}
}

// A count sent outside any request's span (the front's address count runs before the
// route's span starts) makes no trace of its own; one under a request's sampled span is a
// child of it. Every span is sampled here: a root span would be recorded.
func TestSharedCountsStartNoTraceOfTheirOwn(t *testing.T) {
	rds, keys := testenv.Redis(t)
	spans := testenv.RecordSpans(t)
	s := NewSharedCounts(rds)
	if _, err := s.Take(context.Background(), gatekeys.Keys{Prefix: keys.Prefix}.RateLimit(1), 60, 5); err != nil {
		t.Fatal(err)
	}
	for _, sp := range spans.GetSpans() {
		t.Errorf("a count outside any request made the span %q (parent %v)", sp.Name, sp.Parent.SpanID())
	}
	ctx, req := otel.Tracer("test").Start(context.Background(), "request")
	if _, err := s.Take(ctx, gatekeys.Keys{Prefix: keys.Prefix}.RateLimit(2), 60, 5); err != nil {
		t.Fatal(err)
	}
	req.End()
	var child bool
	for _, sp := range spans.GetSpans() {
		child = child || sp.Name == "redis" && sp.Parent.SpanID() == req.SpanContext().SpanID()
	}
	if !child {
		t.Errorf("a count under a sampled request made no redis span of it: %d spans", len(spans.GetSpans()))
	}
}
