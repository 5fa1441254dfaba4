package stock_test

import (
	"maps"
	"math"
	"testing"

	"github.com/seckill/seckill/devkit/stocktest"
)

// The active set as the relay retires from it: Active lists by last due time, Deactivate
// removes one activity.
func TestActiveAndDeactivate(t *testing.T) {
	e := stocktest.New(t)
	for aid, due := range map[int64]int64{1: 100, 2: 200, 3: 300} {
		if err := e.Store.Activate(ctx, aid, due); err != nil {
			t.Fatal(err)
		}
	}
	got, err := e.Store.Active(ctx, 0, 200)
	if err != nil || !maps.Equal(got, map[int64]int64{1: 100, 2: 200}) {
		t.Fatalf("Active(0, 200) = %v %v", got, err)
	}
	if got, err := e.Store.Active(ctx, 200, math.MaxInt64); err != nil ||
		!maps.Equal(got, map[int64]int64{2: 200, 3: 300}) {
		t.Fatalf("Active(200, max) = %v %v", got, err)
	}
	if err := e.Store.Deactivate(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if due, err := e.Store.Active(ctx, 0, math.MaxInt64); err != nil ||
		!maps.Equal(due, map[int64]int64{2: 200, 3: 300}) {
		t.Fatalf("Active after Deactivate(1) = %v %v", due, err)
	}
}

// The "no such activity" mark: SetMissing sets it for a while, SetMissing with 0 clears it.
func TestSetMissing(t *testing.T) {
	e := stocktest.New(t)
	if err := e.Store.SetMissing(ctx, 5, 30); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.Store.Missing(ctx, 5); err != nil || !ok {
		t.Fatalf("after SetMissing(30): missing %v, %v", ok, err)
	}
	if err := e.Store.SetMissing(ctx, 5, 0); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.Store.Missing(ctx, 5); err != nil || ok {
		t.Fatalf("after SetMissing(0): missing %v, %v", ok, err)
	}
}
