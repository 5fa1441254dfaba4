package redisx_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/internal/redisx"
)

// TestProbeAsksOnce: the probe's PING of a Redis that hangs up is one connection, answered
// false; go-redis's default client tries it 4 times with backoff, each dial attempted up to
// 5 times, which delayed degrade mode's switch past an instance's lease
// (TestDegradeFenceRedisWriteStall failed: the stall was not exercised).
func TestProbeAsksOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_ = c.Close()
		}
	}()
	conf := redis.RedisConf{Host: l.Addr().String(), Type: redis.NodeType}
	probe := redisx.NewProbe(conf)
	defer probe.Close()
	if redisx.Answers(context.Background(), probe) {
		t.Fatal("a Redis that hangs up answers")
	}
	if n := accepted.Swap(0); n != 1 {
		t.Fatalf("the probe's PING made %d connections, want 1", n)
	}
	// A refused connection is not counted here: the probe dials it once (go-redis: 5 times,
	// 100 ms apart, for each try; 0.4 s a PING measured).
	if o := probe.(*red.Client).Options(); o.DialerRetries != 1 {
		t.Fatalf("the probe attempts a dial %d times, want 1", o.DialerRetries)
	}
	client := redisx.NewClient(conf)
	defer client.Close()
	if redisx.Answers(context.Background(), client) {
		t.Fatal("a Redis that hangs up answers")
	}
	t.Logf("the default client: %d connections", accepted.Load())
	if n := accepted.Load(); n < 2 {
		t.Fatalf("the client's PING made %d connections: it no longer retries, and this test checks nothing", n)
	}
}
