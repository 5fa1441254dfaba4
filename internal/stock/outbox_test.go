package stock_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/seckill/seckill/devkit/stocktest"
)

// The active set as the relay retires from it: ActiveUntil lists by last due time, Deactivate
// removes one activity.
func TestActiveUntilAndDeactivate(t *testing.T) {
	e := stocktest.New(t)
	for aid, due := range map[int64]int64{1: 100, 2: 200, 3: 300} {
		if err := e.Store.Activate(ctx, aid, due); err != nil {
			t.Fatal(err)
		}
	}
	got, err := e.Store.ActiveUntil(ctx, 200)
	if err != nil || !maps.Equal(got, map[int64]int64{1: 100, 2: 200}) {
		t.Fatalf("ActiveUntil(200) = %v %v", got, err)
	}
	if err := e.Store.Deactivate(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if ids, err := e.Store.ActiveIDs(ctx, 0); err != nil || !slices.Equal(ids, []int64{2, 3}) {
		t.Fatalf("ActiveIDs after Deactivate(1) = %v %v", ids, err)
	}
}
