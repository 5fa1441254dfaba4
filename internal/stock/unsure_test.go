package stock_test

import (
	"net"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
)

// A script call whose connection broke after the dial may have reached Redis (Unsure); one
// whose dial failed did not. Both are BUSY.
func TestUnsureOnlyOnceTheScriptMayHaveBeenSent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close() // the connection breaks after the dial
		}
	}()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := closed.Addr().String()
	_ = closed.Close() // nothing listens: the dial fails
	t.Cleanup(func() { _ = ln.Close() })
	for addr, want := range map[string]bool{ln.Addr().String(): true, deadAddr: false} {
		rds := redis.MustNewRedis(redis.RedisConf{Host: addr, Type: redis.NodeType, NonBlock: true})
		s := stock.NewStore(rds, stock.Keys{Prefix: "unsure:"})
		_, err := s.ReserveBatch(ctx, 1, []domain.ReserveItem{{UID: 1, Qty: 1, RequestID: reqID(1)}}, time.Time{})
		if err == nil || xerr.CodeOf(err) != xerr.Busy || stock.Unsure(err) != want {
			t.Errorf("%s: %v (unsure %v), want BUSY, unsure %v", addr, err, stock.Unsure(err), want)
		}
	}
}
