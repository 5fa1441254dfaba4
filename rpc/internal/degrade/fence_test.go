package degrade_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/degrade"
)

// countingInventory counts mode reads (the real model on a real MySQL underneath).
type countingInventory struct {
	model.InventoryModel
	reads atomic.Int64
}

func (c *countingInventory) FindMode(ctx context.Context, aid int64) (string, error) {
	c.reads.Add(1)
	return c.InventoryModel.FindMode(ctx, aid)
}

// TestModeReadsAreShared: callers that find an activity's view stale together share one
// mode read, and the Bloom check (slow here, as with Redis cut: slower than the lease)
// is asked only for an activity not seen yet. Without both, every call re-read the mode
// behind its own Bloom check while a read was slower than L, and those reads, not the
// MySQL book, bounded degrade mode (the degrade bench: ~0.45 s per reservation).
func TestModeReadsAreShared(t *testing.T) {
	db := testenv.MySQL(t)
	res, err := db.DB.Exec("INSERT INTO activity (sku_id, name, total, start_time, end_time, per_user_limit, " +
		"pay_timeout_seconds) VALUES (9, 'phone', 10, 0, 4000000000, 2, 60)")
	if err != nil {
		t.Fatal(err)
	}
	aid, _ := res.LastInsertId()
	if _, err := db.DB.Exec("INSERT INTO inventory (activity_id, available) VALUES (?, 10)", aid); err != nil {
		t.Fatal(err)
	}
	// A caller scheduled later than the lease after the shared read finds the view stale again
	// and reads once more: at 50 ms that was 2 of 40 runs beside a CPU spinner under -race.
	const lease = 250 * time.Millisecond
	inv := &countingInventory{InventoryModel: model.NewInventoryModel(db.Conn)}
	var known atomic.Int64
	b := &degrade.Fence{On: true, Conf: degrade.Conf{Concurrency: 4, LeaseMs: int(lease / time.Millisecond)},
		Inventory: inv, Known: func(context.Context, int64) bool {
			known.Add(1)
			time.Sleep(2 * lease) // slower than the lease
			return true
		}}
	burst := func() {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 32 {
			wg.Go(func() {
				<-start
				if mysql, _, err := b.Route(context.Background(), aid); err != nil || mysql {
					t.Errorf("route: mysql %v, err %v", mysql, err)
				}
			})
		}
		close(start)
		wg.Wait()
	}
	burst()
	if k, r := known.Load(), inv.reads.Load(); k != 1 || r != 1 {
		t.Fatalf("32 callers on a new activity: %d Bloom checks, %d mode reads; want 1 and 1", k, r)
	}
	time.Sleep(2 * lease) // the view is stale
	burst()
	if k, r := known.Load(), inv.reads.Load(); k != 1 || r != 2 {
		t.Fatalf("32 callers on a stale view of a seen activity: %d Bloom checks, %d mode reads in all; want 1 and 2", k, r)
	}
}
