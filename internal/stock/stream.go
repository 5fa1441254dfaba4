package stock

import (
	"context"
	"errors"
	"strings"
	"time"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/stores/redis"
)

// A Stream reads and trims the activities' outbox streams for the relay, on a connection of
// its own (a blocking node), so a blocking read holds no connection of the store's pool.
type Stream struct {
	node redis.ClosableNode
	keys Keys
}

// Stream opens a connection to the outbox streams; Close it when done.
func (o Outbox) Stream() (*Stream, error) {
	node, err := redis.CreateBlockingNode(o.s.rds)
	if err != nil {
		return nil, err
	}
	return &Stream{node: node, keys: o.s.keys}, nil
}

// Close closes the stream's connection.
func (c *Stream) Close() { c.node.Close() }

// CreateGroup creates the consumer group on the activity's stream, reading from its start;
// nil when it exists already.
func (c *Stream) CreateGroup(ctx context.Context, aid int64, group string) error {
	err := c.node.XGroupCreateMkStream(ctx, c.keys.Events(aid), group, "0").Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return err
	}
	return nil
}

// ReadGroup reads up to count entries never delivered to the group (XREADGROUP), waiting up
// to block for one (negative: no wait); none when none came.
func (c *Stream) ReadGroup(ctx context.Context, aid int64, group, consumer string, count int64,
	block time.Duration) ([]red.XMessage, error) {
	streams, err := c.node.XReadGroup(ctx, &red.XReadGroupArgs{Group: group, Consumer: consumer,
		Streams: []string{c.keys.Events(aid), ">"}, Count: count, Block: block}).Result()
	if errors.Is(err, red.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var msgs []red.XMessage
	for _, s := range streams {
		msgs = append(msgs, s.Messages...)
	}
	return msgs, nil
}

// Claim takes over, for consumer, up to count entries pending in the group for minIdle or
// longer, from start (XAUTOCLAIM); next is where the following call starts ("0-0": done).
func (c *Stream) Claim(ctx context.Context, aid int64, group, consumer string, minIdle time.Duration,
	start string, count int64) (msgs []red.XMessage, next string, err error) {
	return c.node.XAutoClaim(ctx, &red.XAutoClaimArgs{Stream: c.keys.Events(aid), Group: group,
		MinIdle: minIdle, Start: start, Count: count, Consumer: consumer}).Result()
}

// Range returns up to count entries with ids from start to stop (XRANGE).
func (c *Stream) Range(ctx context.Context, aid int64, start, stop string, count int64) ([]red.XMessage, error) {
	return c.node.XRangeN(ctx, c.keys.Events(aid), start, stop, count).Result()
}

// AckDelete acknowledges in the group and deletes the entries ids, in one MULTI.
func (c *Stream) AckDelete(ctx context.Context, aid int64, group string, ids []string) error {
	key := c.keys.Events(aid)
	_, err := c.node.TxPipelined(ctx, func(p red.Pipeliner) error {
		p.XAck(ctx, key, group, ids...)
		p.XDel(ctx, key, ids...)
		return nil
	})
	return err
}

// Drop deletes the activity's stream.
func (c *Stream) Drop(ctx context.Context, aid int64) error {
	return c.node.Del(ctx, c.keys.Events(aid)).Err()
}
