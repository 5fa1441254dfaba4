package jobs

import (
	"context"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/testenv"
)

// TestTickIsOneTrace: a tick's MySQL calls are children of its span job.<name>, the one root;
// without it each call was a root span, a trace of its own that belonged to no request.
func TestTickIsOneTrace(t *testing.T) {
	db := testenv.MySQL(t)
	spans := testenv.RecordSpans(t)
	l := newLoop("warmup", time.Second, func(ctx context.Context) error {
		var n int
		for range 2 {
			if err := db.Conn.QueryRowCtx(ctx, &n, "SELECT 1"); err != nil {
				return err
			}
		}
		return nil
	})
	l.run()
	var roots, sql []string
	for _, s := range spans.GetSpans() {
		if !s.Parent.IsValid() {
			roots = append(roots, s.Name)
		}
		if s.Name == "sql" {
			sql = append(sql, s.Parent.SpanID().String())
		}
	}
	if len(roots) != 1 || roots[0] != "job.warmup" || len(sql) != 2 {
		t.Fatalf("a tick of two queries: root spans %q, sql spans under %q; want one root job.warmup", roots, sql)
	}
}
