package coalesce

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/xerr"
)

// DoWithin waits as Do under context.WithTimeout: an item still queued when its wait passes
// is answered BUSY and never sent, and a sent batch's context ends at its items' latest bound.
func TestDoWithinBoundsTheWait(t *testing.T) {
	type sent struct {
		items    []string
		deadline time.Time
		bounded  bool
		release  chan struct{}
	}
	calls := make(chan sent, 8)
	g := NewGroup(1, 16, Metrics{}, func(ctx context.Context, _ int64, items []string) ([]string, error) {
		d, ok := ctx.Deadline()
		s := sent{items: items, deadline: d, bounded: ok, release: make(chan struct{})}
		calls <- s
		<-s.release
		return items, nil
	})
	type got struct {
		res string
		err error
	}
	do := func(item string, wait time.Duration) chan got {
		out := make(chan got, 1)
		go func() {
			res, err := g.DoWithin(context.Background(), 1, item, wait)
			out <- got{res, err}
		}()
		return out
	}
	start := time.Now()
	held := do("held", time.Minute)
	first := within(t, calls, "no call")
	if !first.bounded || first.deadline.Before(start.Add(time.Minute-time.Second)) ||
		first.deadline.After(time.Now().Add(time.Minute)) {
		t.Fatalf("the sent call's deadline %v (bounded %v), want about a minute from %v", first.deadline,
			first.bounded, start)
	}
	late := within(t, do("late", 50*time.Millisecond), "queued past its wait: no answer")
	if xerr.CodeOf(late.err) != xerr.Busy || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("queued past its wait: %q, %v after %s; want BUSY after 50ms", late.res, late.err, time.Since(start))
	}
	kept := do("kept", time.Minute)
	close(first.release)
	if r := <-held; r.res != "held" || r.err != nil {
		t.Fatalf("held: %q, %v", r.res, r.err)
	}
	second := within(t, calls, "no call")
	if !slices.Equal(second.items, []string{"kept"}) {
		t.Fatalf("sent %v, want only [kept]", second.items)
	}
	close(second.release)
	if r := <-kept; r.res != "kept" || r.err != nil {
		t.Fatalf("kept: %q, %v", r.res, r.err)
	}
	if _, err := g.DoWithin(context.Background(), 1, "none", 0); xerr.CodeOf(err) != xerr.Busy {
		t.Fatalf("no wait at all: %v, want BUSY", err)
	}
}

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
