package book_test

import (
	"context"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/internal/book"
)

// A reservation whose script is held in the link to Redis past its call's deadline (a
// partition that heals: the request delivered late) sells nothing when it arrives: the call was
// answered BUSY, so a late sale would hand stock to a buyer told no (the deploy test's
// partition row saw it once: a retry refused LIMIT_EXCEEDED, then the late script's order).
// Without the sell-by from the call's deadline the late script reserves.
func TestLateScriptSellsNothing(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 10})
	p, err := devenv.StartProxy(testenv.RedisAddr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	late := stock.NewStore(redis.MustNewRedis(redis.RedisConf{Host: p.Addr, Type: redis.NodeType}), e.Keys)
	b := book.Redis{Store: late}
	// Through the proxy once, undelayed, so the connection and the script are in place.
	if _, err := late.Stock(context.Background(), aid); err != nil {
		t.Fatal(err)
	}
	const hold = 900 * time.Millisecond
	p.SetSendDelay(hold)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := b.ReserveBatch(ctx, aid, []domain.ReserveItem{{UID: 7, Qty: 1, RequestID: "late-request-1"}})
	if err == nil {
		err = res[0].Err
	}
	if xerr.CodeOf(err) != xerr.Busy {
		t.Fatalf("reserve through a link holding it %s: %v, want BUSY", hold, err)
	}
	// The held script reaches Redis hold after it was sent: wait for it, then for Redis's answer.
	time.Sleep(time.Until(start.Add(hold + 600*time.Millisecond)))
	p.SetSendDelay(0)
	held, err := e.Raw.HGet(context.Background(), e.Keys.Buyers(aid), stock.ReqField(7, "late-request-1")).Result()
	if err == nil {
		t.Errorf("the late script reserved request late-request-1 (order %s) after its call was answered BUSY", held)
	}
	if c := e.CheckInvariant(aid); c.Remaining != 10 {
		t.Errorf("remaining %d after a reservation answered BUSY, want 10 (%+v)", c.Remaining, c)
	}
}
