package writer

import (
	"context"
	"fmt"
	"testing"

	"github.com/seckill/seckill/internal/event"
)

// BenchmarkWriter compares, in the same run, one transaction per event, group commit fed
// by 16 blocking handlers (what kq's in-order connections gave), and the batched path the
// mq service runs (mq/internal/consumer: Submit without waiting, up to 4096 in flight,
// MaxBatch 1000), delivering reserved+paid pairs against the real MariaDB.
//
//	go test -tags no_k8s -run '^$' -bench BenchmarkWriter -benchtime 4000x ./mq/internal/writer/
func BenchmarkWriter(b *testing.B) {
	for _, bc := range []struct {
		name     string
		maxBatch int
		batched  bool
	}{{"per-event-tx", 1, false}, {"group-commit", 256, false}, {"batched", 1000, true}} {
		b.Run(bc.name, func(b *testing.B) {
			db := newDB(b, 1<<40)
			w := New(testConf(b, func(c *Conf) { c.MaxBatch = bc.maxBatch }), NewConn(db.DSN), &recorder{})
			run(b, w)
			values := make([]string, 0, b.N)
			for i := 0; len(values) < b.N; i++ {
				ono := fmt.Sprintf("%d-1700000000000%08x", testAID, i)
				values = append(values, marshal(b, orderEvent(event.Reserved, ono, 1)))
				if len(values) < b.N {
					values = append(values, marshal(b, orderEvent(event.Paid, ono, 1)))
				}
			}
			b.ResetTimer()
			if bc.batched {
				submitAll(b, w, values, 4096)
			} else {
				consumeAll(b, w, values, 16)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(w.Stats.Events.Load())/float64(max(w.Stats.Batches.Load(), 1)), "events/tx")
		})
	}
}

// submitAll hands every value to the writer without waiting, at most inFlight unanswered,
// and waits for all answers (the consumer's shape).
func submitAll(b *testing.B, w *Writer, values []string, inFlight int) {
	slots := make(chan struct{}, inFlight)
	errs := make(chan error, len(values))
	for _, v := range values {
		slots <- struct{}{}
		w.Submit(context.Background(), "", v, func(err error) {
			errs <- err
			<-slots
		})
	}
	for range values {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
}
