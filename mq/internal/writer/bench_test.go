package writer

import (
	"fmt"
	"testing"

	"github.com/seckill/seckill/internal/event"
)

// BenchmarkWriter compares group commit with one transaction per event in the same run:
// 16 concurrent handlers (what 8 in-order kq connections feed on 2 cores) deliver
// reserved+paid pairs through Consume against the real MariaDB.
//
//	go test -tags no_k8s -run '^$' -bench BenchmarkWriter -benchtime 4000x ./mq/internal/writer/
func BenchmarkWriter(b *testing.B) {
	for _, bc := range []struct {
		name     string
		maxBatch int
	}{{"per-event-tx", 1}, {"group-commit", 256}} {
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
			consumeAll(b, w, values, 16)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(w.Stats.Events.Load())/float64(max(w.Stats.Batches.Load(), 1)), "events/tx")
		})
	}
}
