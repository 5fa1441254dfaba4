package stock_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/devkit/stocktest"
)

// baselineScript is the floor a reservation is compared with: one EVALSHA doing one atomic
// decrement, through the same go-zero client.
var baselineScript = redis.NewScript(`return redis.call('HINCRBY', KEYS[1], 'n', -1)`)

// BenchmarkReserve runs reservations (every one succeeds: distinct users, ample stock)
// and, in the same run, the raw EVALSHA baseline. Compare ns/op of the two:
//
//	go test -tags no_k8s -run '^$' -bench 'Reserve|RawEvalsha' -benchtime 20000x ./internal/stock/
func BenchmarkReserve(b *testing.B) {
	e := stocktest.New(b)
	aid := e.Warm(stocktest.Spec{Total: int64(b.N) + 1})
	var uid atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			u := uid.Add(1)
			if _, err := stocktest.Reserve(ctx, e.Store, aid, u, 1, fmt.Sprintf("bench-%08d", u)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkRawEvalsha(b *testing.B) {
	e := stocktest.New(b)
	key := e.Keys.Stock(1)
	if err := e.Redis.Hset(key, "n", fmt.Sprint(b.N)); err != nil {
		b.Fatal(err)
	}
	if _, err := e.Redis.ScriptLoad(`return redis.call('HINCRBY', KEYS[1], 'n', -1)`); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := e.Redis.ScriptRunCtx(ctx, baselineScript, []string{key}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
