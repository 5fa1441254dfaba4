package apiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/api/gatekeys"
)

type outcome struct {
	status  int
	code    string
	orderNo string
}

// race sends n requests released together; req(i) gives the token and body of the i-th.
func (e *env) race(n int, req func(i int) (string, any)) []outcome {
	e.t.Helper()
	out := make([]outcome, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		tok, body := req(i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			code, raw := e.do(http.MethodPost, "/v1/seckill/orders", tok, body)
			var v struct {
				Code    string `json:"code"`
				OrderNo string `json:"order_no"`
			}
			_ = json.Unmarshal(raw, &v)
			out[i] = outcome{code, v.Code, v.OrderNo}
		}()
	}
	close(start)
	wg.Wait()
	return out
}

func TestThousandBuyersStockHundred(t *testing.T) {
	e := start(t)
	a := e.warm(map[string]any{"stock": 100})
	tokens := make([]string, 1000)
	for i := range tokens {
		tokens[i] = buyerToken(t, int64(10_000+i))
	}
	res := e.race(len(tokens), func(i int) (string, any) {
		return tokens[i], reserveBody(a.ActivityID, fmt.Sprintf("buyer-%06d", i), 1)
	})
	orders := map[string]bool{}
	soldOut := 0
	for i, o := range res {
		switch {
		case o.status == http.StatusOK && o.orderNo != "":
			orders[o.orderNo] = true
		case o.status == http.StatusConflict && o.code == "SOLD_OUT":
			soldOut++
		default:
			t.Errorf("buyer %d: unexpected outcome %+v", i, o)
		}
	}
	if len(orders) != 100 || soldOut != 900 {
		t.Fatalf("%d distinct orders and %d SOLD_OUT, want 100 and 900", len(orders), soldOut)
	}
	if rem, locked, sold := e.redisStock(a.ActivityID); rem != 0 || locked != 100 || sold != 0 {
		t.Fatalf("redis: remaining %d locked %d sold %d", rem, locked, sold)
	}
	if n := e.orderCount(a.ActivityID); n != 100 {
		t.Fatalf("%d orders in redis, want 100", n)
	}
}

func TestConcurrentReplayOneOrder(t *testing.T) {
	e := start(t)
	a := e.warm(map[string]any{"stock": 10, "per_user_limit": 3})
	tok := buyerToken(t, 4242)
	res := e.race(200, func(int) (string, any) {
		return tok, reserveBody(a.ActivityID, "same-request-id", 2)
	})
	nos := map[string]int{}
	for i, o := range res {
		if o.status != http.StatusOK || o.orderNo == "" {
			t.Fatalf("attempt %d: %+v", i, o)
		}
		nos[o.orderNo]++
	}
	if len(nos) != 1 {
		t.Fatalf("one request id gave %d orders: %v", len(nos), nos)
	}
	if rem, locked, _ := e.redisStock(a.ActivityID); rem != 8 || locked != 2 {
		t.Fatalf("remaining %d locked %d, want 8 and 2 (deducted once)", rem, locked)
	}
	if n := e.orderCount(a.ActivityID); n != 1 {
		t.Fatalf("%d orders, want 1", n)
	}
}

func TestRateLimit(t *testing.T) {
	e := start(t, func(c *apiserver.Config) {
		c.RateLimit.Enabled = true
		c.RateLimit.Period = 60
		c.RateLimit.Quota = 3
		c.RateLimit.Shared = true
	})
	a := e.warm(map[string]any{"stock": 100, "per_user_limit": 100})
	hasty, calm := buyerToken(t, 1), buyerToken(t, 2)
	for i := range 3 {
		e.call(http.MethodPost, "/v1/seckill/orders", hasty, reserveBody(a.ActivityID, fmt.Sprintf("hasty-%04d", i), 1), nil)
	}
	e.expectErr(http.MethodPost, "/v1/seckill/orders", hasty, reserveBody(a.ActivityID, "hasty-0099", 1),
		http.StatusTooManyRequests, "RATE_LIMITED")
	// The limit is per user, and lives in Redis under the test's prefix.
	e.call(http.MethodPost, "/v1/seckill/orders", calm, reserveBody(a.ActivityID, "calm-0001", 1), nil)
	if ok, _ := e.rds.Exists(gatekeys.Keys{Prefix: e.keys.Prefix}.RateLimit(1)); !ok {
		t.Fatal("no limiter key under the prefix")
	}
	if rem, _, _ := e.redisStock(a.ActivityID); rem != 96 {
		t.Fatalf("remaining %d, want 96 (the limited request reserved nothing)", rem)
	}

	t.Run("concurrent burst: exactly quota pass", func(t *testing.T) {
		burst := buyerToken(t, 3)
		res := e.race(50, func(i int) (string, any) {
			return burst, reserveBody(a.ActivityID, fmt.Sprintf("burst-%04d", i), 1)
		})
		ok, limited := 0, 0
		for _, o := range res {
			switch {
			case o.status == http.StatusOK:
				ok++
			case o.status == http.StatusTooManyRequests && o.code == "RATE_LIMITED":
				limited++
			default:
				t.Errorf("unexpected %+v", o)
			}
		}
		if ok != 3 || limited != 47 {
			t.Fatalf("%d passed, %d limited; want 3 and 47", ok, limited)
		}
	})
}
