// Package relay moves the Redis outbox to Kafka: for every active activity it reads the
// outbox stream with a consumer group, produces the entries to the events topic (acks=all,
// keyed by order_no), and only then XACKs and deletes them. Entries a dead relay had read
// but not finished are reclaimed (XAUTOCLAIM) once idle long enough. Delivery is at least
// once: a crash between Kafka's ack and XACK sends an entry again, and the writer is
// idempotent.
package relay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	red "github.com/redis/go-redis/v9"
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
	// BatchTimeout is kafka-go's batch timeout (pure latency for a synchronous call).
	BatchTimeout time.Duration `json:",default=2ms"`
	// Acknowledge is when the inventory service answers a change: "kafka" (default) once
	// its event is in Kafka and its book still sells (Acker), so nothing acknowledged is
	// lost with Redis's memory; "redis" once Redis holds it and its outbox entry (faster;
	// what Redis loses before the relay moved it is lost: DESIGN.md, "Failure stance").
	Acknowledge string `json:",default=kafka,options=kafka|redis"`
	// AckWait (Acknowledge kafka): the relay produces an entry only once it is this old,
	// and skips the entries the inventory service's Acker produced and deleted meanwhile,
	// so an acknowledged change reaches Kafka once, not twice. An Acker slower than that
	// has its entry produced twice (the writer is idempotent); it adds at most this much
	// to the delivery of an entry nobody acknowledged (an Acker that failed).
	AckWait time.Duration `json:",default=100ms"`
	// AckBatchSize bounds a partition's batch of the Acker's own producer. Its calls carry
	// one entry each, batched across concurrent callers; kafka-go allocates a batch's
	// full capacity up front, so BatchSize (500) made every small batch 76 KB: 0.47 GB of
	// allocations for 14,000 reservations, a fifth of the service's.
	AckBatchSize int `json:",default=64,range=[1:10000]"`
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
	stream   *stock.Stream // the loop's connection (refresh, retire)
	events   kafkax.Sender
	dead     kafkax.Sender
	acks     kafkax.Sender // the Acker's (nil: events)
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

// worker relays one activity's outbox on its own connection (a blocking node), so that
// one activity whose delivery is retrying never delays another's, and relay latency does
// not grow with the number of warm activities: each worker blocks on its own stream.
type worker struct {
	*Relay
	aid     int64
	stream  *stock.Stream
	grouped bool // the stream's consumer group exists
}

// New returns a relay producing to c.Brokers. grace is how long an activity's keys live
// after its last order falls due (the active set's score, end + pay timeout): an activity
// leaves the active set only after that + grace, once drained.
func New(c Conf, store *stock.Store, grace time.Duration) (*Relay, error) {
	var pc kafkax.Conf // the producer's own defaults, then the relay's settings
	if err := conf.FillDefault(&pc); err != nil {
		return nil, err
	}
	pc.Brokers, pc.BatchTimeout = c.Brokers, c.BatchTimeout
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
	r, err := NewWithSenders(c, store, grace, events, dead)
	if err != nil {
		return nil, err
	}
	r.acks = acks
	r.closers = append(r.closers, events.Close, dead.Close, acks.Close)
	return r, nil
}

// NewWithSenders returns a relay producing through the given senders (tests inject
// failing ones).
func NewWithSenders(c Conf, store *stock.Store, grace time.Duration, events, dead kafkax.Sender) (*Relay, error) {
	stream, err := store.Outbox().Stream()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
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
			stream, err := r.store.Outbox().Stream()
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

// unacknowledged waits until the youngest of msgs is AckWait old, then returns those the
// outbox still holds: the others an Acker produced and deleted, and they are acknowledged
// in the group here without producing them again. On a failed read it returns msgs (at
// least once); when the relay stops meanwhile, none (they stay pending, reclaimed later).
func (r *worker) unacknowledged(ctx context.Context, msgs []red.XMessage) []red.XMessage {
	// Only an entry an Acker may produce is waited for: the expiry job's releases
	// (type expired) are acknowledged to nobody, so a burst of expiries is relayed at
	// once, not AckWait per batch.
	youngest := -1
	for i, m := range msgs {
		if m.Values[event.FieldType] != string(event.Expired) {
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

// deliver produces msgs (events to the topic, unparsable entries to the dead-letter
// topic), then XACKs and deletes exactly those Kafka acknowledged. Failed ones are retried
// with backoff until they go through or the relay stops (then they stay pending and are
// reclaimed later). It returns how many entries it removed from the outbox.
func (r *worker) deliver(ctx context.Context, msgs []red.XMessage) int {
	key := r.store.Outbox().Name(r.aid)
	items, gone := toItems(key, msgs)
	if len(gone) > 0 {
		r.ackDelete(ctx, gone)
	}
	removed := 0
	backoff := 50 * time.Millisecond
	for len(items) > 0 && ctx.Err() == nil {
		acked, err := r.produce(ctx, key, items)
		var n int
		items, n = r.remove(ctx, items, acked)
		removed += n
		if len(items) > 0 {
			metricErrors.WithLabelValues("produce").Inc()
			logx.Errorf("relay: %d entries of %s not acknowledged by Kafka, retrying in %v: %v",
				len(items), key, backoff, err)
			sleepCtx(ctx, backoff)
			backoff = min(backoff*2, 5*time.Second)
		}
	}
	return removed
}

// item is an outbox entry ready to produce: an event for the topic, or a dead letter.
type item struct {
	id   string
	msg  kafkax.Message
	dead bool
}

// toItems turns stream entries into items; gone are the entries deleted from the stream
// while pending (Redis < 7: an id without values).
func toItems(key string, msgs []red.XMessage) (items []item, gone []string) {
	items = make([]item, 0, len(msgs))
	for _, m := range msgs {
		if len(m.Values) == 0 {
			gone = append(gone, m.ID)
			continue
		}
		items = append(items, toItem(key, m))
	}
	return items, gone
}

// toItem is the event of an outbox entry, or a dead letter when it does not parse.
func toItem(key string, m red.XMessage) item {
	ev, err := event.FromStream(m.ID, m.Values)
	if err == nil {
		var v []byte
		if v, err = ev.Marshal(); err == nil {
			return item{id: m.ID, msg: kafkax.Message{Key: []byte(ev.Key()), Value: v}}
		}
		// cannot happen for a validated event; keep it visible anyway
	}
	return item{id: m.ID, dead: true, msg: kafkax.DeadLetter{
		Source: kafkax.SourceOutbox, Reason: err.Error(), Key: key, EntryID: m.ID,
		Payload: fmt.Sprint(m.Values)}.Message()}
}

// produce sends the events to the topic and the dead letters to the dead-letter topic,
// and reports which items Kafka acknowledged.
func (r *Relay) produce(ctx context.Context, key string, items []item) ([]bool, error) {
	var evIdx, deadIdx []int
	for i, it := range items {
		if it.dead {
			deadIdx = append(deadIdx, i)
		} else {
			evIdx = append(evIdx, i)
		}
	}
	acked := make([]bool, len(items))
	err := send(ctx, r.events, items, evIdx, acked)
	if len(deadIdx) == 0 {
		return acked, err
	}
	deadErr := send(ctx, r.dead, items, deadIdx, acked)
	for _, i := range deadIdx {
		if acked[i] {
			metricDeadLetters.Inc()
			logx.Errorf("relay: outbox entry %s of %s dead-lettered: %s", items[i].id, key,
				string(items[i].msg.Headers[0].Value))
		}
	}
	return acked, errors.Join(err, deadErr)
}

// send produces the items at idx through s in one call and marks those Kafka
// acknowledged in acked.
func send(ctx context.Context, s kafkax.Sender, items []item, idx []int, acked []bool) error {
	if len(idx) == 0 {
		return nil
	}
	msgs := make([]kafkax.Message, len(idx))
	for j, i := range idx {
		msgs[j] = items[i].msg
	}
	err := s.Send(ctx, msgs...)
	for j, ok := range kafkax.Acked(err, len(msgs)) {
		acked[idx[j]] = ok
	}
	return err
}

// remove acknowledges and deletes the acked items from the outbox and returns the
// others, and how many it removed.
func (r *worker) remove(ctx context.Context, items []item, acked []bool) (rest []item, removed int) {
	var ids []string
	rest = items[:0]
	for i, it := range items {
		if acked[i] {
			ids = append(ids, it.id)
		} else {
			rest = append(rest, it)
		}
	}
	if len(ids) > 0 && r.ackDelete(ctx, ids) {
		removed = len(ids)
		metricRelayed.Add(float64(removed))
	}
	return rest, removed
}

// ackDelete acknowledges and deletes entries in one MULTI, so an entry is never left
// acknowledged but present (which would block the drain check forever). On failure the
// entries stay pending: reclaimed and produced again later (at least once).
func (r *worker) ackDelete(ctx context.Context, ids []string) bool {
	if err := r.stream.AckDelete(ctx, r.aid, Group, ids); err != nil {
		metricErrors.WithLabelValues("ack").Inc()
		logx.Errorf("relay: ack %d entries of %s: %v", len(ids), r.store.Outbox().Name(r.aid), err)
		return false
	}
	return true
}

// refresh re-reads the active set, updates the gauges and retires activities that are
// past end+grace with an empty outbox.
func (r *Relay) refresh(ctx context.Context) {
	now := r.now()
	ids, err := r.store.ActiveIDs(ctx, 0)
	if err != nil {
		if ctx.Err() == nil {
			metricErrors.WithLabelValues("refresh").Inc()
			logx.Errorf("relay: read active set: %v", err)
		}
		return
	}
	if r.OnGone != nil {
		for _, aid := range r.ids {
			if !slices.Contains(ids, aid) {
				// Not retired by a relay (that removes it here first): the active set lost
				// it, as Redis does when it loses its data.
				go r.OnGone(aid)
			}
		}
	}
	r.ids = ids
	for _, aid := range ids {
		label := strconv.FormatInt(aid, 10)
		n, err := r.stream.Len(ctx, aid)
		if err != nil {
			continue
		}
		metricOutboxLength.WithLabelValues(label).Set(float64(n))
		lag := 0.0
		if first, err := r.stream.Range(ctx, aid, "-", "+", 1); err == nil && len(first) > 0 {
			if ms, ok := entryMillis(first[0].ID); ok {
				lag = max(float64(now.UnixMilli()-ms)/1000, 0)
			}
		}
		metricLag.WithLabelValues(label).Set(lag)
	}
	r.retire(ctx, now)
}

// retire removes activities whose end+grace has passed and whose outbox is drained.
func (r *Relay) retire(ctx context.Context, now time.Time) {
	cutoff := now.Add(-r.grace).Unix() - 1
	old, err := r.store.ActiveUntil(ctx, cutoff)
	if err != nil {
		return
	}
	for _, a := range old {
		aid, label := a.ID, strconv.FormatInt(a.ID, 10)
		if n, err := r.stream.Len(ctx, aid); err != nil || n > 0 {
			continue
		}
		if err := r.store.Deactivate(ctx, aid); err != nil {
			continue
		}
		// No script writes after end+grace (the stock hash is gone); check once more all
		// the same, and put the activity back rather than strand an entry.
		if n, err := r.stream.Len(ctx, aid); err != nil || n > 0 {
			_ = r.store.MarkActive(ctx, aid, a.LastDue)
			continue
		}
		_ = r.stream.Drop(ctx, aid)
		r.ids = slices.DeleteFunc(r.ids, func(id int64) bool { return id == aid })
		// The activity is gone: so are its series (labels stay bounded).
		metricOutboxLength.DeleteLabelValues(label)
		metricLag.DeleteLabelValues(label)
		logx.Infof("relay: activity %d retired (ended, grace over, outbox drained)", aid)
	}
}

// entryMillis is the creation time (ms) in a stream entry id "<ms>-<seq>".
func entryMillis(id string) (int64, bool) {
	i := strings.IndexByte(id, '-')
	if i <= 0 {
		return 0, false
	}
	ms, err := strconv.ParseInt(id[:i], 10, 64)
	return ms, err == nil
}
