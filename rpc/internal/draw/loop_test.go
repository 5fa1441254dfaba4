package draw

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zeromicro/go-zero/core/logx/logtest"
)

// A source that keeps failing (Redis down: every tick, for the activity list) is logged when
// it starts failing and not again on every tick; once it succeeds, its next failure is news.
func TestFailingTicksAreLoggedOnce(t *testing.T) {
	logs := logtest.NewCollector(t)
	fail := true
	l := NewLoop(&Drawer{}, func(context.Context) ([]int64, error) {
		if fail {
			return nil, errors.New("redis: connection refused")
		}
		return nil, nil
	})
	count := func() int { return strings.Count(logs.String(), "list active activities") }
	for range 50 { // 10 s of ticks at 200 ms
		l.tick(context.Background())
	}
	if n := count(); n != 1 {
		t.Fatalf("50 failing ticks logged %d times, want once", n)
	}
	fail = false
	l.tick(context.Background())
	fail = true
	l.tick(context.Background())
	if n := count(); n != 2 {
		t.Fatalf("a failure after a success logged %d times in all, want 2", n)
	}
}
