package draw_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill/seckill/rpc/internal/draw"
)

// drawDurations reads seckill_draw_duration_seconds (count and sum) from the default
// registry, the one /metrics serves.
func drawDurations(t *testing.T) (count uint64, sum float64) {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "seckill_draw_duration_seconds" {
			h := mf.Metric[0].GetHistogram()
			return h.GetSampleCount(), h.GetSampleSum()
		}
	}
	return 0, 0
}

// TestDrawDurationInSeconds: a finished draw observes its duration once, in seconds: more
// than 0 and no more than the wall time around Run (in ms it would be 1000 times that).
func TestDrawDurationInSeconds(t *testing.T) {
	f := newFixture(t)
	aid := f.activity(t, 5, 20, seedOf(21), 300*time.Millisecond)
	count, sum := drawDurations(t)
	start := time.Now()
	if err := (&draw.Drawer{Store: f.e.Store, Seeds: f.acts, Chunk: 8}).Run(ctx, aid); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start).Seconds()
	c, s := drawDurations(t)
	if c != count+1 || s-sum <= 0 || s-sum > elapsed {
		t.Fatalf("seckill_draw_duration_seconds: %d observations (+%d), %.6f s observed; want +1, in (0, %.6f]",
			c, c-count, s-sum, elapsed)
	}
}
