// Package relay moves each active activity's Redis outbox to Kafka, at least once: read with a
// consumer group, produced (acks=all), then acknowledged and deleted; the Acker answers changes
// only once their event is in Kafka (docs/DESIGN.md, "The relay" and "Acknowledged only once in Kafka").
package relay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeromicro/go-zero/core/conf"
	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/stock"
)

// Group is the consumer group every relay reads the outbox streams with.
const Group = "relay"

// Conf configures the relay. It runs only when Enabled and Brokers is set. Build it with
// go-zero's config loader (or conf.FillDefault): the defaults live only in the tags.
type Conf struct {
	Enabled bool     `json:",default=true"`
	Brokers []string `json:",optional"`
	// Topic and DeadLetterTopic name the events topic and its dead-letter topic
	// (event.Topic and event.DeadLetterTopic in every shipped configuration).
	Topic           string
	DeadLetterTopic string
	// BatchSize is the most entries read from one stream and produced in one call.
	BatchSize int `json:",default=500,range=[1:10000]"`
	// Block is how long an idle relay waits for new entries (spread over the streams).
	Block time.Duration `json:",default=100ms"`
	// ClaimIdle: entries another relay has held this long without acking are taken over.
	ClaimIdle time.Duration `json:",default=30s"`
	// ClaimInterval is how often the relay looks for such entries.
	ClaimInterval time.Duration `json:",default=5s"`
	// RefreshInterval is how often the active set is re-read and the gauges updated.
	RefreshInterval time.Duration `json:",default=1s"`
	// BatchTimeout, when set, overrides the producers' kafka-go batch timeout
	// (kafkax.Conf.BatchTimeout: flush as soon as a call's messages are in).
	BatchTimeout time.Duration `json:",optional"`
	// Acknowledge is when the inventory service answers a change: "kafka" (default) once
	// its event is in Kafka and its book still sells (Acker), so nothing acknowledged is
	// lost with Redis's memory; "redis" once Redis holds it and its outbox entry (faster;
	// what Redis loses before the relay moved it is lost: DESIGN.md, "Failure stance").
	Acknowledge string `json:",default=kafka,options=kafka|redis"`
	// AckWait (Acknowledge kafka): the relay produces an entry only once it is this old,
	// skipping those an Acker produced and deleted meanwhile.
	AckWait time.Duration `json:",default=100ms"`
	// AckBatchSize bounds a partition's batch of the Acker's own producer.
	AckBatchSize int `json:",default=64,range=[1:10000]"`
	// Kafka is the SASL and TLS the producers connect with.
	Kafka kafkax.Auth `json:",optional"`
	// EventKey signs every event (HMAC-SHA256, kafkax.HeaderMAC) for the writer, which shares
	// it; from the environment (${SECKILL_EVENT_KEY}). Empty: events go unsigned.
	EventKey string `json:",optional"`
}

// AckAfterKafka reports whether changes are answered only once their event is in Kafka.
func (c Conf) AckAfterKafka() bool { return c.Active() && c.Acknowledge != "redis" }

// Active reports whether c asks for a relay.
func (c Conf) Active() bool { return c.Enabled && len(c.Brokers) > 0 }

// Relay is a service.Service: Start blocks until Stop.
type Relay struct {
	c        Conf
	store    *stock.Store
	grace    time.Duration
	stream   *stream // the loop's connection (refresh, retire)
	events   kafkax.Sender
	dead     kafkax.Sender
	acks     kafkax.Sender // the Acker's (nil: events)
	acker    atomic.Pointer[Acker]
	closers  []func() error
	consumer string
	now      func() time.Time

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once

	ids []int64 // the active set as last read (the loop's; workers have their own id)

	// OnGone, when set before Start, is called (in its own goroutine) for an activity that
	// left the active set without being retired, or whose stream lost its consumer group:
	// what the relay sees of Redis losing its data. The inventory service resolves it like
	// any stock hash miss (a rebuild).
	OnGone func(aid int64)
}

// New returns a relay producing to c.Brokers. grace is how long an activity's keys live
// after its last order falls due (the active set's score, end + pay timeout): an activity
// leaves the active set only after that + grace, once drained.
func New(c Conf, store *stock.Store, grace time.Duration) (*Relay, error) {
	var pc kafkax.Conf // the producer's own defaults, then the relay's settings
	if err := conf.FillDefault(&pc); err != nil {
		return nil, err
	}
	pc.Brokers, pc.Auth = c.Brokers, c.Kafka
	if c.BatchTimeout > 0 {
		pc.BatchTimeout = c.BatchTimeout
	}
	ec, dc, ac := pc, pc, pc
	ec.Topic, ec.BatchSize = c.Topic, c.BatchSize
	ac.Topic, ac.BatchSize = c.Topic, c.AckBatchSize
	dc.Topic = c.DeadLetterTopic
	events, err := kafkax.NewProducer(ec)
	if err != nil {
		return nil, err
	}
	dead, err := kafkax.NewProducer(dc)
	if err != nil {
		return nil, err
	}
	acks, err := kafkax.NewProducer(ac)
	if err != nil {
		return nil, err
	}
	// Events are signed on both produce paths (relay and Acker); dead letters are not events.
	signer := kafkax.NewSigner(c.EventKey)
	r, err := NewWithSenders(c, store, grace, kafkax.Signed(events, signer), dead)
	if err != nil {
		return nil, err
	}
	r.acks = kafkax.Signed(acks, signer)
	r.closers = append(r.closers, events.Close, dead.Close, acks.Close)
	return r, nil
}

// NewWithSenders returns a relay producing through the given senders (tests inject
// failing ones).
func NewWithSenders(c Conf, store *stock.Store, grace time.Duration, events, dead kafkax.Sender) (*Relay, error) {
	stream, err := openStream(store.Outbox())
	if err != nil {
		return nil, err
	}
	// Untraced: the relay's Redis calls belong to no request (its produce is a root span of
	// its own, linked to its messages' traces: event.StartSpan).
	ctx, cancel := context.WithCancel(event.Untraced(context.Background()))
	return &Relay{c: c, store: store, grace: grace, stream: stream,
		events: events, dead: dead, consumer: consumerName(), now: time.Now,
		ctx: ctx, cancel: cancel, done: make(chan struct{})}, nil
}

// consumerName is unique per relay instance: host, pid and a random suffix.
func consumerName() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Consumer is this relay's consumer name in the group.
func (r *Relay) Consumer() string { return r.consumer }

// Start relays until Stop: every RefreshInterval it re-reads the active set (gauges,
// retirement) and runs one worker per active activity.
func (r *Relay) Start() {
	defer close(r.done)
	logx.Infof("relay %s: outbox -> %s", r.consumer, r.c.Topic)
	workers := map[int64]context.CancelFunc{}
	var wg sync.WaitGroup
	defer func() {
		for _, stop := range workers {
			stop()
		}
		wg.Wait()
	}()
	for r.ctx.Err() == nil {
		r.refresh(r.ctx)
		live := map[int64]bool{}
		for _, aid := range r.ids {
			live[aid] = true
			if workers[aid] != nil {
				continue
			}
			stream, err := openStream(r.store.Outbox())
			if err != nil {
				logx.Errorf("relay: activity %d: connect: %v", aid, err)
				continue
			}
			ctx, stop := context.WithCancel(r.ctx)
			workers[aid] = stop
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer stream.Close()
				(&worker{Relay: r, aid: aid, stream: stream}).run(ctx)
			}()
		}
		for aid, stop := range workers {
			if !live[aid] { // retired
				stop()
				delete(workers, aid)
			}
		}
		r.sleep(r.c.RefreshInterval)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Stop stops relaying and waits for the loop to end; entries read but not yet produced
// stay pending for this consumer and are reclaimed by another relay after ClaimIdle.
func (r *Relay) Stop() {
	r.once.Do(func() {
		r.cancel()
		<-r.done
		for _, c := range r.closers {
			_ = c()
		}
		r.stream.Close()
	})
}

func (r *Relay) sleep(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.ctx.Done():
	case <-t.C:
	}
}

// refresh re-reads the active set, updates the gauges and retires activities that are
// past end+grace with an empty outbox.
func (r *Relay) refresh(ctx context.Context) {
	now := r.now()
	due, err := r.store.Active(ctx, 0, math.MaxInt64)
	if err != nil {
		if ctx.Err() == nil {
			metricErrors.WithLabelValues("refresh").Inc()
			logx.Errorf("relay: read active set: %v", err)
		}
		return
	}
	ids := slices.Sorted(maps.Keys(due))
	for _, aid := range r.ids {
		if _, ok := due[aid]; ok {
			continue
		}
		r.ended(aid)
		if r.OnGone != nil {
			// Not retired by a relay (that removes it here first): the active set lost
			// it, as Redis does when it loses its data.
			go r.OnGone(aid)
		}
	}
	r.ids = ids
	for _, aid := range ids {
		label := strconv.FormatInt(aid, 10)
		n, err := r.store.Outbox().Len(ctx, aid)
		if err != nil {
			continue
		}
		metricOutboxLength.WithLabelValues(label).Set(float64(n))
		lag := 0.0
		if first, err := r.stream.Range(ctx, aid, "-", "+", 1); err == nil && len(first) > 0 {
			if t := entryTime(first[0].ID); !t.IsZero() {
				lag = max(float64(now.UnixMilli()-t.UnixMilli())/1000, 0)
			}
		}
		metricLag.WithLabelValues(label).Set(lag)
	}
	r.retire(ctx, now, due)
}

// retire removes, of the active set due (activity id -> last due time), the activities whose
// end+grace has passed and whose outbox is drained.
func (r *Relay) retire(ctx context.Context, now time.Time, due map[int64]int64) {
	cutoff := now.Add(-r.grace).Unix() - 1
	for aid, lastDue := range due {
		if lastDue > cutoff {
			continue
		}
		label := strconv.FormatInt(aid, 10)
		if n, err := r.store.Outbox().Len(ctx, aid); err != nil || n > 0 {
			continue
		}
		if err := r.store.Deactivate(ctx, aid); err != nil {
			continue
		}
		// No script writes after end+grace (the stock hash is gone); check once more all
		// the same, and put the activity back rather than strand an entry.
		if n, err := r.store.Outbox().Len(ctx, aid); err != nil || n > 0 {
			_ = r.store.Activate(ctx, aid, lastDue)
			continue
		}
		_ = r.stream.Drop(ctx, aid)
		r.ids = slices.DeleteFunc(r.ids, func(id int64) bool { return id == aid })
		r.ended(aid)
		// The activity is gone: so are its series (labels stay bounded).
		metricOutboxLength.DeleteLabelValues(label)
		metricLag.DeleteLabelValues(label)
		logx.Infof("relay: activity %d retired (ended, grace over, outbox drained)", aid)
	}
}

// Acker returns the relay's acker (one per relay: the relay drops its records of ended
// activities), producing to the events topic through a producer of its own
// (Conf.AckBatchSize), or the relay's when the relay was given its senders.
func (r *Relay) Acker() *Acker {
	if a := r.acker.Load(); a != nil {
		return a
	}
	events := r.acks
	if events == nil {
		events = r.events
	}
	a := NewAcker(events, r.store)
	a.topic = r.c.Topic
	r.acker.CompareAndSwap(nil, a)
	return r.acker.Load()
}

// ended forgets what the Acker recorded of an activity that left the active set.
func (r *Relay) ended(aid int64) {
	if a := r.acker.Load(); a != nil {
		a.forgetMark(aid)
	}
}
