package coalesce

import (
	"context"
	"testing"
	"time"
)

// BenchmarkBoundedWait: one item's bounded wait through a Group whose calls answer at once,
// from parallel callers (batches form), each under a request's own cancellable context as
// net/http gives one: Do under context.WithTimeout (the gateway's replay check before
// issue #36's cut) beside DoWithin.
//
//	go test -tags no_k8s -run '^$' -bench BoundedWait -benchmem ./api/internal/coalesce/
func BenchmarkBoundedWait(b *testing.B) {
	const wait = 250 * time.Millisecond
	echo := func(_ context.Context, _ int64, items []string) ([]string, error) { return items, nil }
	run := func(b *testing.B, do func(g *Group[string, string], ctx context.Context) error) {
		g := NewGroup(2, 256, Metrics{}, echo)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				ctx, cancel := context.WithCancel(context.Background())
				if err := do(g, ctx); err != nil {
					b.Error(err)
				}
				cancel()
			}
		})
	}
	b.Run("Do+WithTimeout", func(b *testing.B) {
		run(b, func(g *Group[string, string], ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, wait)
			defer cancel()
			_, err := g.Do(ctx, 1, "r1:abcdefgh")
			return err
		})
	})
	b.Run("DoWithin", func(b *testing.B) {
		run(b, func(g *Group[string, string], ctx context.Context) error {
			_, err := g.DoWithin(ctx, 1, "r1:abcdefgh", wait)
			return err
		})
	})
}
