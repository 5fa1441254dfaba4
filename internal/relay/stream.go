package relay

import (
	"context"
	"errors"
	"strings"
	"time"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/internal/stock"
)

// A stream reads and trims the activities' outbox streams for the relay, on a connection of
// its own (a blocking node, stock.Outbox.Conn), so a blocking read holds no connection of the
// store's pool.
type stream struct {
	node redis.ClosableNode
	keys stock.Keys // the store's: keys.Events(aid) is the activity's outbox stream
}

// openStream opens a connection to the outbox streams; Close it when done.
func openStream(o stock.Outbox) (*stream, error) {
	node, keys, err := o.Conn()
	if err != nil {
		return nil, err
	}
	return &stream{node: node, keys: keys}, nil
}

// name is the activity's outbox stream, as the relay's logs and dead letters name it.
func (c *stream) name(aid int64) string { return c.keys.Events(aid) }

// Close closes the stream's connection.
func (c *stream) Close() { c.node.Close() }

// CreateGroup creates the consumer group on the activity's stream, reading from its start;
// nil when it exists already.
func (c *stream) CreateGroup(ctx context.Context, aid int64, group string) error {
	err := c.node.XGroupCreateMkStream(ctx, c.name(aid), group, "0").Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return err
	}
	return nil
}

// ReadGroup reads up to count entries never delivered to the group (XREADGROUP), waiting up
// to block for one (negative: no wait); none when none came.
func (c *stream) ReadGroup(ctx context.Context, aid int64, group, consumer string, count int64,
	block time.Duration) ([]red.XMessage, error) {
	streams, err := c.node.XReadGroup(ctx, &red.XReadGroupArgs{Group: group, Consumer: consumer,
		Streams: []string{c.name(aid), ">"}, Count: count, Block: block}).Result()
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
func (c *stream) Claim(ctx context.Context, aid int64, group, consumer string, minIdle time.Duration,
	start string, count int64) (msgs []red.XMessage, next string, err error) {
	return c.node.XAutoClaim(ctx, &red.XAutoClaimArgs{Stream: c.name(aid), Group: group,
		MinIdle: minIdle, Start: start, Count: count, Consumer: consumer}).Result()
}

// Range returns up to count entries with ids from start to stop (XRANGE).
func (c *stream) Range(ctx context.Context, aid int64, start, stop string, count int64) ([]red.XMessage, error) {
	return c.node.XRangeN(ctx, c.name(aid), start, stop, count).Result()
}

// AckDelete acknowledges in the group and deletes the entries ids, in one MULTI.
func (c *stream) AckDelete(ctx context.Context, aid int64, group string, ids []string) error {
	key := c.name(aid)
	_, err := c.node.TxPipelined(ctx, func(p red.Pipeliner) error {
		p.XAck(ctx, key, group, ids...)
		p.XDel(ctx, key, ids...)
		return nil
	})
	return err
}

// Drop deletes the activity's stream.
func (c *stream) Drop(ctx context.Context, aid int64) error {
	return c.node.Del(ctx, c.name(aid)).Err()
}
