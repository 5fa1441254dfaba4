package relay

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/internal/event"
)

// worker relays one activity's outbox on its own connection (a blocking node), so that
// one activity whose delivery is retrying never delays another's, and relay latency does
// not grow with the number of warm activities: each worker blocks on its own stream.
type worker struct {
	*Relay
	aid     int64
	stream  *stream
	grouped bool // the stream's consumer group exists
}

// run relays the worker's activity until ctx ends: new entries (XREADGROUP, blocking up
// to Block when idle), and every ClaimInterval the entries a dead relay left.
func (r *worker) run(ctx context.Context) {
	var lastClaim time.Time
	block := time.Duration(-1) // the first read does not block
	for ctx.Err() == nil {
		if time.Since(lastClaim) >= r.c.ClaimInterval {
			r.claim(ctx, r.aid)
			lastClaim = time.Now()
		}
		n, err := r.relayNew(ctx, r.aid, block)
		if err != nil && ctx.Err() == nil {
			metricErrors.WithLabelValues("read").Inc()
			logx.Errorf("relay: activity %d: %v", r.aid, err)
			sleepCtx(ctx, r.c.Block)
		}
		block = -1
		if n == 0 {
			block = r.c.Block
		}
	}
}

// relayNew reads entries never delivered to the group and relays them.
func (r *worker) relayNew(ctx context.Context, aid int64, block time.Duration) (int, error) {
	if err := r.ensureGroup(ctx, aid); err != nil {
		return 0, err
	}
	msgs, err := r.stream.ReadGroup(ctx, aid, Group, r.consumer, int64(r.c.BatchSize), block)
	if isNoGroup(err) { // the stream was deleted (retired, or Redis lost it)
		r.grouped = false
		if r.OnGone != nil {
			go r.OnGone(aid)
		}
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if r.c.AckAfterKafka() && r.c.AckWait > 0 {
		msgs = r.unacknowledged(ctx, msgs)
	}
	return r.deliver(ctx, msgs), nil
}

// unacknowledged waits until the youngest of msgs is AckWait old and returns those the outbox
// still holds, acknowledging in the group the ones an Acker produced and deleted meanwhile.
func (r *worker) unacknowledged(ctx context.Context, msgs []red.XMessage) []red.XMessage {
	// Only an entry an Acker may produce is waited for: the expiry job's releases
	// (type expired) are acknowledged to nobody, so a burst of expiries is relayed at
	// once, not AckWait per batch.
	youngest := -1
	for i, m := range msgs {
		if event.EntryType(m.Values) != event.Expired {
			youngest = i
		}
	}
	if youngest < 0 {
		return msgs
	}
	if wait := time.Until(entryTime(msgs[youngest].ID).Add(r.c.AckWait)); wait > 0 {
		sleepCtx(ctx, min(wait, r.c.AckWait)) // a Redis clock ahead of ours waits no longer
	}
	if ctx.Err() != nil {
		return nil
	}
	left, err := r.stream.Range(ctx, r.aid, msgs[0].ID, msgs[len(msgs)-1].ID, int64(len(msgs)))
	if err != nil {
		metricErrors.WithLabelValues("read").Inc()
		logx.Errorf("relay: activity %d: reading which entries an Acker produced: %v", r.aid, err)
		return msgs
	}
	held := make(map[string]bool, len(left))
	for _, m := range left {
		held[m.ID] = true
	}
	var gone []string
	out := msgs[:0]
	for _, m := range msgs {
		if held[m.ID] {
			out = append(out, m)
		} else {
			gone = append(gone, m.ID)
		}
	}
	if len(gone) > 0 && r.ackDelete(ctx, gone) {
		metricProducedByAcker.Add(float64(len(gone)))
	}
	return out
}

// entryTime is when a stream entry was added (its id's milliseconds); zero when the id
// does not parse.
func entryTime(id string) time.Time {
	ms, _, _ := strings.Cut(id, "-")
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(n)
}

// ensureGroup creates the stream's consumer group reading from the beginning.
func (r *worker) ensureGroup(ctx context.Context, aid int64) error {
	if r.grouped {
		return nil
	}
	if err := r.stream.CreateGroup(ctx, aid, Group); err != nil {
		return fmt.Errorf("create group: %w", err)
	}
	r.grouped = true
	return nil
}

func isNoGroup(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "NOGROUP") }

// claim takes over entries another relay read and left unacknowledged for ClaimIdle.
func (r *worker) claim(ctx context.Context, aid int64) {
	if err := r.ensureGroup(ctx, aid); err != nil {
		return
	}
	start := "0-0"
	for ctx.Err() == nil {
		msgs, next, err := r.stream.Claim(ctx, aid, Group, r.consumer, r.c.ClaimIdle, start, int64(r.c.BatchSize))
		if err != nil {
			if isNoGroup(err) {
				r.grouped = false
			} else if ctx.Err() == nil {
				metricErrors.WithLabelValues("claim").Inc()
				logx.Errorf("relay: claim activity %d: %v", aid, err)
			}
			return
		}
		if len(msgs) > 0 {
			metricReclaimed.Add(float64(len(msgs)))
			logx.Infof("relay %s: reclaimed %d outbox entries of activity %d", r.consumer, len(msgs), aid)
			r.deliver(ctx, msgs)
		}
		if next == "0-0" || next == "" {
			return
		}
		start = next
	}
}
