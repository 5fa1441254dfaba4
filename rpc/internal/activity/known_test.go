package activity_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/rpc/internal/activity"
)

// ids is a Page over a list of ids that can be made to fail, as MySQL unreachable.
type ids struct {
	mu   sync.Mutex
	list []int64
	err  error
}

func (p *ids) page(_ context.Context, after int64, limit int) ([]int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return nil, p.err
	}
	var out []int64
	for _, id := range p.list {
		if id > after && len(out) < limit {
			out = append(out, id)
		}
	}
	return out, nil
}

func (p *ids) set(list []int64, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list, p.err = list, err
}

// An id the filter lacks is ruled out only by a catch-up that read MySQL: when that read
// fails (an activity created on another instance whose Add failed, read while MySQL or
// Redis is failing) the id may exist, and the caller reads MySQL rather than answering 404.
// The cluster table's CI run answered a warm-up of a just-created activity
// ACTIVITY_NOT_FOUND right after a Redis failover.
func TestKnownRulesOutOnlyWhatItRead(t *testing.T) {
	env := stocktest.New(t)
	p := &ids{list: []int64{1}}
	k := activity.NewKnown(env.Redis, activity.BloomKey(env.Keys.Prefix), 1<<16, p.page, 10*time.Millisecond)
	if _, err := k.Seed(ctx); err != nil {
		t.Fatal(err)
	}
	if !k.MayExist(ctx, 1) {
		t.Fatal("a seeded id is ruled out")
	}
	if k.MayExist(ctx, 2) {
		t.Fatal("an id MySQL does not have may exist after a catch-up that read MySQL")
	}

	// Activity 2 is created elsewhere and its Add failed; MySQL now fails too.
	p.set([]int64{1, 2}, errors.New("dial tcp: connection refused"))
	time.Sleep(20 * time.Millisecond)
	if !k.MayExist(ctx, 2) {
		t.Fatal("a failed catch-up ruled out an id it never read")
	}
	if !k.MayExist(ctx, 3) {
		t.Fatal("a failed catch-up (the caller's, or one it waited for) ruled out an id")
	}

	// MySQL is back: the catch-up finds 2 and rules 3 out again.
	p.set([]int64{1, 2}, nil)
	time.Sleep(20 * time.Millisecond)
	if !k.MayExist(ctx, 2) {
		t.Fatal("an id MySQL has is ruled out after a catch-up")
	}
	time.Sleep(20 * time.Millisecond)
	if k.MayExist(ctx, 3) {
		t.Fatal("an id MySQL does not have may exist once MySQL answers again")
	}
}
