package apiserver_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill/seckill/api/apiserver"
)

// batchSizes reads the coalescer's batch-size histogram: calls sent and reservations in them.
func batchSizes(t *testing.T) (calls uint64, items float64) {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "seckill_api_reserve_batch_size" {
			for _, m := range mf.GetMetric() {
				calls += m.GetHistogram().GetSampleCount()
				items += m.GetHistogram().GetSampleSum()
			}
		}
	}
	return calls, items
}

// Buyers released together through the real gateway, one call in flight per activity, sell
// exactly the stock: the coalescer sent batches of more than one, each buyer got its own
// answer, a request sent twice at once got one order (or SOLD_OUT twice), the books balance.
// The edge's own answers are off: a sold-out mark may answer a replay SOLD_OUT before it
// reaches the service (docs/API.md), and this test is about what the service answers.
func TestCoalescedBuyersSellExactlyTheStock(t *testing.T) {
	e := start(t, func(c *apiserver.Config) {
		c.Coalesce.Enabled, c.Coalesce.InFlight, c.Edge.Enabled = true, 1, false
	})
	const stock, buyers, twice = 60, 200, 40 // buyers [0, twice) send their request twice
	a := e.warm(map[string]any{"stock": stock, "per_user_limit": 1})
	tokens := make([]string, buyers)
	for i := range tokens {
		tokens[i] = buyerToken(t, int64(20_000+i))
	}
	calls0, items0 := batchSizes(t)
	res := e.race(buyers+twice, func(i int) (string, any) {
		b := i % buyers
		return tokens[b], reserveBody(a.ActivityID, fmt.Sprintf("coalesced-%06d", b), 1)
	})
	calls1, items1 := batchSizes(t)

	orders := map[string]int{} // order number -> buyer
	soldOut := 0
	for i, o := range res {
		b := i % buyers
		switch {
		case o.status == http.StatusOK && o.orderNo != "":
			if other, ok := orders[o.orderNo]; ok && other != b {
				t.Errorf("order %s answered to buyers %d and %d", o.orderNo, other, b)
			}
			orders[o.orderNo] = b
		case o.status == http.StatusConflict && o.code == "SOLD_OUT":
			if i < buyers {
				soldOut++
			}
		default:
			t.Errorf("request %d (buyer %d): unexpected outcome %+v", i, b, o)
		}
		if i >= buyers && o != res[b] {
			t.Errorf("buyer %d's request twice: %+v and %+v", b, res[b], o)
		}
	}
	if len(orders) != stock || soldOut != buyers-stock {
		t.Fatalf("%d distinct orders and %d SOLD_OUT, want %d and %d", len(orders), soldOut, stock, buyers-stock)
	}
	if rem, locked, sold := e.redisStock(a.ActivityID); rem != 0 || locked != stock || sold != 0 {
		t.Fatalf("redis: remaining %d locked %d sold %d", rem, locked, sold)
	}
	e.invariant(a.ActivityID)
	calls, items := calls1-calls0, items1-items0
	t.Logf("%v reservations in %d ReserveBatch calls", items, calls)
	if calls == 0 || items <= float64(calls) {
		t.Fatalf("%v reservations in %d calls: no batch of more than one", items, calls)
	}
}
