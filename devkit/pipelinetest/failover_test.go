package pipelinetest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	red "github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/devkit/pipelinetest"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/relay"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
)

// inKafka is a Kafka that takes every event.
type inKafka struct{}

func (inKafka) Send(context.Context, ...kafkax.Message) error { return nil }

// promote makes the private Redis what a promoted replica is: a master under a new
// replication id (REPLICAOF, then REPLICAOF NO ONE, shifts it as a failover does).
func promote(t *testing.T, c *red.Client) {
	t.Helper()
	before := c.Info(ctx, "replication").Val()
	for _, args := range [][]any{{"REPLICAOF", "127.0.0.1", "1"}, {"REPLICAOF", "NO", "ONE"}} {
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if c.Info(ctx, "replication").Val() == before {
		t.Fatal("the replication id did not change")
	}
}

// TestFailoverToALaggingReplicaIsRebuilt: two inventory services' Ackers, A and B, acknowledge
// changes of one activity; the Redis is then promoted from a replica that missed A's last four
// (its keys rolled back with DUMP/RESTORE, its replication id shifted). No change count shows
// it to the Acker of the next change: B acknowledged none of the lost ones, or changes no
// Acker saw (their answers lost in the failover) reissued every lost count. The change must
// still be BUSY and the stock hash deleted for a rebuild: acknowledged, it would resell a
// unit A's buyer holds, and MySQL, short of units, would refuse one of the two orders (the
// likely cause of the 4 acknowledged orders the cluster table's "kill -9 the hot master" row
// once reported lost; docs/DESIGN.md "Another Redis since").
func TestFailoverToALaggingReplicaIsRebuilt(t *testing.T) {
	p := pipelinetest.Start(t, pipelinetest.Options{})
	c := red.NewClient(&red.Options{Addr: p.Redis.Addr})
	defer c.Close()
	store := stock.NewStore(p.RDS, p.Keys, stock.WithEntries())
	if err := store.LoadScripts(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		before []int // which Acker (0 A, 1 B) acknowledged each change the replica has
		unseen int   // changes made on the promoted Redis whose answers no Acker saw
		next   int   // the Acker of the change after the failover
	}{
		{"another service acknowledged the lost changes", []int{0, 1}, 0, 1},
		{"unseen changes reissued every lost count", []int{0, 1}, 5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Now()
			aid := p.Activity(100, 1, 600, now.Add(-time.Minute), now.Add(time.Hour))
			ackers := []*relay.Acker{relay.NewAcker(inKafka{}, store), relay.NewAcker(inKafka{}, store)}
			uid := int64(0)
			reserve := func(via *relay.Acker) error { // via nil: the answer is lost
				uid++
				res, err := store.ReserveBatch(ctx, aid, []domain.ReserveItem{{UID: uid, Qty: 1,
					RequestID: fmt.Sprintf("failover-%d", uid)}}, time.Time{})
				if err != nil || res[0].Err != nil || via == nil {
					return errors.Join(err, res[0].Err)
				}
				es, _ := stock.Awaited(res)
				return via.AckBatch(ctx, es)[0]
			}
			for _, i := range tc.before {
				if err := reserve(ackers[i]); err != nil {
					t.Fatal(err)
				}
			}
			snap := takeSnapshot(t, p, c, aid)
			for range 4 { // acknowledged by A, never replicated
				if err := reserve(ackers[0]); err != nil {
					t.Fatal(err)
				}
			}
			rollBack(t, p, c, aid, snap)
			promote(t, c)
			for range tc.unseen {
				if err := reserve(nil); err != nil {
					t.Fatal(err)
				}
			}
			err := reserve(ackers[tc.next])
			if code := xerr.FromStatus(err); code == nil || code.Code != xerr.Busy {
				t.Fatalf("the change after the failover: %v, want BUSY", err)
			}
			if _, err := store.Stock(ctx, aid); !errors.Is(err, stock.ErrNotWarm) {
				t.Fatalf("the rolled-back stock hash was not deleted for a rebuild: %v", err)
			}
		})
	}
}
