package relay_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/relay"
	"github.com/seckill/seckill/internal/stock"
)

// The Acker refuses a change, and deletes the stock hash for a rebuild, when Redis is
// seen to have lost changes it acknowledged in the stock hash's epoch: the hash's change
// count below the highest it acknowledged, a seq acknowledged before for another entry,
// or an entry's seq above the hash's (lost between the change and its check).
func TestAckerDetectsLostAcknowledgedWrites(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	stockKey := e.keys.Stock(aid)
	setSeq := func(seq int) {
		t.Helper()
		if err := e.raw.HSet(ctx, stockKey, "seq", seq).Err(); err != nil {
			t.Fatal(err)
		}
	}
	rewarm := func() {
		t.Helper()
		now := time.Now().Unix()
		if _, _, err := e.store.Warmup(ctx, domain.Activity{ActivityID: aid, SkuID: 70, Name: "relay",
			Counters: domain.Counters{Total: 100000, Remaining: 100000}, Start: now - 60, End: now + 3600, Limit: 10,
			PayTimeout: 900, ExpireAt: now + 7200}); err != nil {
			t.Fatal(err)
		}
	}
	uid := int64(0)
	var b acked // each case's own Acker
	reserve := func() error {
		uid++
		_, err := b.Reserve(ctx, aid, uid, 1, fmt.Sprintf("lost-req-%d", uid))
		return err
	}
	adjust := func() error { _, err := b.Adjust(ctx, aid, 1); return err }
	for _, tc := range []struct {
		name   string
		before int            // changes acknowledged first (seq 1..before)
		lose   func(k *kafka) // what Redis forgets, and when
		next   func() error
		want   func(err error) bool // of the next change
	}{
		{"healthy", 3, func(*kafka) {}, reserve, func(err error) bool { return err == nil }},
		// an adjustment carries no seq: only the hash's count tells
		{"hash below the highest acknowledged", 3, func(*kafka) { setSeq(1) }, adjust, busy},
		{"a seq acknowledged for another entry", 3, func(*kafka) { setSeq(2) }, reserve, busy},
		{"the entry above the hash", 0, func(k *kafka) { k.set(false, func() { setSeq(0) }) }, reserve, busy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := &kafka{}
			b = acked{e.store, relay.NewAcker(k, e.store)}
			rewarm()
			for range tc.before {
				if err := reserve(); err != nil {
					t.Fatal(err)
				}
			}
			tc.lose(k)
			err := tc.next()
			if !tc.want(err) {
				t.Fatalf("the change after: %v", err)
			}
			_, serr := e.store.Stock(ctx, aid)
			if gone := errors.Is(serr, stock.ErrNotWarm); gone == (err == nil) {
				t.Fatalf("stock hash deleted: %v (%v), want %v", gone, serr, err != nil)
			}
		})
	}
	rewarm() // newEnv's cleanup reads it
}

// Two inventory services, A and B, acknowledged seqs 1..6 between them (A the odd, B the even);
// Redis rolls back to seq 2 (a failover to a replica that missed them), and the checks of the
// changes after it fail (here Kafka refuses them; in the cluster table the Redis client's
// breaker, still open from the outage), so no round runs while Redis reissues seqs 3..6 for
// new entries, each to the Acker that did not acknowledge that seq. Each entry handed to an
// Acker must still show the rollback (its seq below the highest acknowledged, its stream id
// above that one's); before, the change after the outage was acknowledged from the
// rolled-back book (the hash's count 7 above every acknowledged one): a resale.
func TestAckerDetectsARollbackWhileItsChecksFail(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ka, kb := &kafka{}, &kafka{}
	a, b := relay.NewAcker(ka, e.store), relay.NewAcker(kb, e.store)
	uid := int64(0)
	reserve := func(via *relay.Acker) error {
		uid++
		_, err := acked{e.store, via}.Reserve(ctx, aid, uid, 1, fmt.Sprintf("failover-req-%d", uid))
		return err
	}
	for i := range 6 {
		if err := reserve([]*relay.Acker{a, b}[i%2]); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.raw.HSet(ctx, e.keys.Stock(aid), "seq", 2).Err(); err != nil {
		t.Fatal(err)
	}
	ka.set(true, nil)
	kb.set(true, nil)
	for i := range 4 { // seqs 3..6 again: 3 to B, 4 to A, 5 to B, 6 to A
		if err := reserve([]*relay.Acker{b, a}[i%2]); !busy(err) {
			t.Fatalf("a change after the rollback while Kafka is down: %v, want BUSY", err)
		}
	}
	if _, err := e.store.Stock(ctx, aid); !errors.Is(err, stock.ErrNotWarm) {
		t.Fatalf("the rolled-back stock hash was not deleted for a rebuild: %v", err)
	}
	ka.set(false, nil)
	kb.set(false, nil)
	if err := reserve(b); !busy(err) {
		t.Fatalf("the change after the outage: %v, want BUSY (the activity is rebuilt)", err)
	}
	now := time.Now().Unix() // newEnv's cleanup reads the stock hash
	if _, _, err := e.store.Warmup(ctx, domain.Activity{ActivityID: aid, SkuID: 70, Name: "relay",
		Counters: domain.Counters{Total: 100000, Remaining: 100000}, Start: now - 60, End: now + 3600, Limit: 10,
		PayTimeout: 900, ExpireAt: now + 7200}); err != nil {
		t.Fatal(err)
	}
}

// A reservation batch's one entry is one change of the stock hash (one seq) and takes part in
// the rollback check like any: after the Acker acknowledged a batch (seq 1), Redis rolls back to
// seq 0 and the next batch's check cannot run (Kafka refuses it); that batch's entry reissues
// seq 1 under another id, which the Acker reads from the entry alone, and it has the stock hash
// deleted for a rebuild.
func TestAckerDetectsARollbackByABatchEntry(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	k := &kafka{}
	b := acked{e.store, relay.NewAcker(k, e.store)}
	first, err := b.ReserveBatch(ctx, aid, batchOf(8, 1), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range first {
		if r.Err != nil {
			t.Fatalf("item %d of the first batch: %v", i, r.Err)
		}
	}
	if err := e.raw.HSet(ctx, e.keys.Stock(aid), "seq", 0).Err(); err != nil {
		t.Fatal(err)
	}
	k.set(true, nil)
	next, err := b.ReserveBatch(ctx, aid, batchOf(8, 100), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range next {
		if !busy(r.Err) {
			t.Fatalf("item %d after the rollback: %+v, want BUSY", i, r)
		}
	}
	if _, err := e.store.Stock(ctx, aid); !errors.Is(err, stock.ErrNotWarm) {
		t.Fatalf("the rolled-back stock hash was not deleted for a rebuild: %v", err)
	}
	now := time.Now().Unix() // newEnv's cleanup reads the stock hash
	if _, _, err := e.store.Warmup(ctx, domain.Activity{ActivityID: aid, SkuID: 70, Name: "relay",
		Counters: domain.Counters{Total: 100000, Remaining: 100000}, Start: now - 60, End: now + 3600, Limit: 10,
		PayTimeout: 900, ExpireAt: now + 7200}); err != nil {
		t.Fatal(err)
	}
}
