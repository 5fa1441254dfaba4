package relay

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	red "github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/devkit/stocktest"
)

// The relay's stream operations: a group read takes each entry once, a claim takes over what
// another consumer left, acknowledging deletes, and Len and Drop see the same stream.
func TestStreamReadClaimAckDrop(t *testing.T) {
	e := stocktest.New(t)
	aid := e.Warm(stocktest.Spec{Total: 10})
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		if _, err := stocktest.Reserve(ctx, e.Store, aid, int64(i), 1, fmt.Sprintf("req-%08d", i)); err != nil {
			t.Fatal(err)
		}
	}
	st, err := openStream(e.Store.Outbox())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for range 2 { // a second create finds the group and is no error
		if err := st.CreateGroup(ctx, aid, "g"); err != nil {
			t.Fatal(err)
		}
	}
	first, err := st.ReadGroup(ctx, aid, "g", "a", 2, -1)
	if err != nil || len(first) != 2 {
		t.Fatalf("first read: %d entries, %v", len(first), err)
	}
	rest, err := st.ReadGroup(ctx, aid, "g", "a", 10, -1)
	if err != nil || len(rest) != 1 {
		t.Fatalf("second read: %d entries, %v", len(rest), err)
	}
	if none, err := st.ReadGroup(ctx, aid, "g", "a", 10, 10*time.Millisecond); err != nil || len(none) != 0 {
		t.Fatalf("read of a drained stream: %d entries, %v", len(none), err)
	}
	claimed, next, err := st.Claim(ctx, aid, "g", "b", 0, "0-0", 10)
	if err != nil || len(claimed) != 3 || next != "0-0" {
		t.Fatalf("claim: %d entries, next %q, %v", len(claimed), next, err)
	}
	all, err := st.Range(ctx, aid, "-", "+", 10)
	if err != nil || len(all) != 3 || all[0].ID != first[0].ID {
		t.Fatalf("range: %v %v", all, err)
	}
	pooled, err := e.Store.Outbox().Entries(ctx, aid, "-", "+", 10)
	if err != nil || !slices.EqualFunc(pooled, all, func(a, b red.XMessage) bool { return a.ID == b.ID }) {
		t.Fatalf("entries through the pool: %v %v", pooled, err)
	}
	if err := st.AckDelete(ctx, aid, "g", []string{first[0].ID, first[1].ID}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.Store.Outbox().Len(ctx, aid); err != nil || n != 1 {
		t.Fatalf("outbox len after ack: %d %v", n, err)
	}
	if err := st.Drop(ctx, aid); err != nil {
		t.Fatal(err)
	}
	if n, err := e.Store.Outbox().Len(ctx, aid); err != nil || n != 0 {
		t.Fatalf("len after drop: %d %v", n, err)
	}
}
