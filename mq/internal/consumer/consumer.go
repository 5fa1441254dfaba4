// Package consumer feeds the writer from the events topic in real batches: group members hand
// messages to the writer without waiting, up to MaxInFlight uncommitted, and commit each
// partition in order up to what MySQL holds (docs/DESIGN.md, "The writer (mq)").
package consumer

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/zeromicro/go-queue/kq"
)

// Handler takes a message and calls done exactly once: nil when it is durable (the
// offset may be committed), an error when it is not (the member stops committing). ctx
// carries the trace context of the message's headers: the span kafka.consume, when it is
// sampled (docs/DESIGN.md, "Traces").
// Reject takes, in the same way, a message that must not be applied (why: the reason).
type Handler interface {
	Submit(ctx context.Context, key, value string, done func(error))
	Reject(key, value, why string, done func(error))
}

// An Option configures a Group.
type Option func(*options)

type options struct {
	dialer *kafka.Dialer
	verify func(kafka.Message) error
}

// WithDialer makes the members connect through d (SASL, TLS: kafkax.Auth.Dialer).
func WithDialer(d *kafka.Dialer) Option { return func(o *options) { o.dialer = d } }

// WithVerify hands a message that verify refuses to the handler's Reject instead of Submit.
func WithVerify(verify func(kafka.Message) error) Option {
	return func(o *options) { o.verify = verify }
}

// Conf is what the consumer takes beyond kq's settings.
type Conf struct {
	// MaxInFlight bounds a member's messages handed to the writer and not yet committed.
	MaxInFlight int `json:",default=4096,range=[1:1000000]"`
	// MaxWait is how long a fetch waits for MinBytes.
	MaxWait time.Duration `json:",default=100ms"`
	// SessionTimeout is how long the group coordinator keeps a silent member's partitions
	// (kafka-go's default 30 s; brokers refuse less than group.min.session.timeout.ms, 6 s).
	SessionTimeout time.Duration `json:",default=30s"`
	// HeartbeatInterval is how often a member tells the coordinator it is alive (a third of
	// SessionTimeout or less).
	HeartbeatInterval time.Duration `json:",default=3s"`
}

// Group is Conns members of the consumer group in this process (a go-zero Service).
type Group struct {
	kc      kq.KqConf
	c       Conf
	h       Handler
	ctx     context.Context
	cancel  context.CancelFunc
	members []*member
	mu      sync.Mutex // Start's adding to wg against Stop's Wait
	wg      sync.WaitGroup
	handed  *positions
}

// positions are, per partition, the offset after the last message handed to the handler
// by any member of this process (its Submit returned).
type positions struct {
	mu  sync.Mutex
	pos map[int]int64
}

func (p *positions) note(partition int, offset int64) {
	p.mu.Lock()
	p.pos[partition] = max(p.pos[partition], offset+1)
	p.mu.Unlock()
}

// Handed returns, for each partition a member of this process has consumed, the offset
// after the last message it handed to the handler: every message before it (that this
// process fetched) is in the handler's hands, even where a parked one holds the
// partition's commits. Partitions it never consumed are absent.
func (g *Group) Handed() map[int]int64 {
	g.handed.mu.Lock()
	defer g.handed.mu.Unlock()
	out := make(map[int]int64, len(g.handed.pos))
	for p, o := range g.handed.pos {
		out[p] = o
	}
	return out
}

// New builds the members from kq's config (Brokers, Group, Topic, Offset, Conns,
// MinBytes, MaxBytes); kc passes through go-zero's loader first.
func New(kc kq.KqConf, c Conf, h Handler, opts ...Option) (*Group, error) {
	if len(kc.Brokers) == 0 || kc.Group == "" || kc.Topic == "" || kc.Conns < 1 {
		return nil, fmt.Errorf("consumer: Brokers, Group, Topic and Conns >= 1 are required (got %+v)", kc)
	}
	start := kafka.FirstOffset
	if kc.Offset == "last" {
		start = kafka.LastOffset
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &Group{kc: kc, c: c, h: h, ctx: ctx, cancel: cancel, handed: &positions{pos: map[int]int64{}}}
	for range kc.Conns {
		gc := kafka.ConsumerGroupConfig{ID: kc.Group, Brokers: kc.Brokers, Topics: []string{kc.Topic},
			StartOffset: start, SessionTimeout: c.SessionTimeout, HeartbeatInterval: c.HeartbeatInterval,
			Dialer: o.dialer}
		if err := gc.Validate(); err != nil {
			cancel()
			return nil, fmt.Errorf("consumer: %w", err)
		}
		g.members = append(g.members, &member{gc: gc,
			rc: kafka.ReaderConfig{Brokers: kc.Brokers, Topic: kc.Topic, MinBytes: kc.MinBytes,
				MaxBytes: kc.MaxBytes, MaxWait: c.MaxWait, Dialer: o.dialer},
			group: kc.Group, h: h, verify: o.verify, slots: make(chan struct{}, c.MaxInFlight), handed: g.handed})
	}
	return g, nil
}

// Start runs every member until Stop.
func (g *Group) Start() {
	g.mu.Lock()
	if g.ctx.Err() == nil { // not stopped before it started
		for _, m := range g.members {
			g.wg.Add(1)
			go func() { defer g.wg.Done(); m.run(g.ctx) }()
		}
	}
	g.mu.Unlock()
	g.wg.Wait()
}

// Stop stops fetching and committing, then closes the readers. Messages handed to the
// handler and not committed by then come again (to this or another member).
func (g *Group) Stop() {
	g.cancel()
	g.mu.Lock()   // a Start in progress has added its members; a later one adds none
	g.mu.Unlock() //nolint:staticcheck // SA2001: the empty section waits for a Start in progress
	g.wg.Wait()
}
