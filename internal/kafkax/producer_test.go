package kafkax_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zeromicro/go-zero/core/conf"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
)

// producerConf is the defaults (as go-zero's loader fills them) for topic at brokers.
func producerConf(t testing.TB, brokers []string, topic string) kafkax.Conf {
	t.Helper()
	var c kafkax.Conf
	if err := conf.FillDefault(&c); err != nil {
		t.Fatal(err)
	}
	c.Brokers, c.Topic = brokers, topic
	return c
}

// consume reads n records of topic from the start.
func consume(t *testing.T, brokers []string, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("got %d of %d records: %v", len(out), n, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

func TestProducerSendsWithKeyAffinity(t *testing.T) {
	brokers := testenv.Kafka(t, 4)
	p, err := kafkax.NewProducer(producerConf(t, brokers, event.Topic))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const keys, perKey = 20, 5
	var msgs []kafkax.Message
	for i := 0; i < perKey; i++ {
		for k := 0; k < keys; k++ {
			msgs = append(msgs, kafkax.Message{Key: []byte(fmt.Sprintf("1-order%d", k)),
				Value: []byte(fmt.Sprintf("%d/%d", k, i))})
		}
	}
	if err := p.Send(context.Background(), msgs...); err != nil {
		t.Fatalf("send: %v", err)
	}
	recs := consume(t, brokers, event.Topic, len(msgs))
	partition := map[string]int32{}
	next := map[string]int{}
	for _, r := range recs {
		k := string(r.Key)
		if p, ok := partition[k]; ok && p != r.Partition {
			t.Fatalf("key %s in partitions %d and %d", k, p, r.Partition)
		}
		partition[k] = r.Partition
		var kk, i int
		_, _ = fmt.Sscanf(string(r.Value), "%d/%d", &kk, &i)
		if i != next[k] {
			t.Fatalf("key %s: got message %d, want %d (order within a key lost)", k, i, next[k])
		}
		next[k]++
	}
	if len(partition) != keys {
		t.Fatalf("%d keys seen, want %d", len(partition), keys)
	}
	used := map[int32]bool{}
	for _, p := range partition {
		used[p] = true
	}
	if len(used) < 2 {
		t.Fatalf("all keys in one partition: the balancer does not hash")
	}
}

func TestProducerReportsFailure(t *testing.T) {
	// A port nothing listens on: the send must fail and acknowledge nothing.
	c := producerConf(t, []string{"127.0.0.1:1"}, event.Topic)
	c.WriteTimeout = time.Second
	p, err := kafkax.NewProducer(c)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = p.Send(ctx, kafkax.Message{Key: []byte("k"), Value: []byte("v")})
	if err == nil {
		t.Fatal("send to a dead broker returned nil")
	}
	for i, ok := range kafkax.Acked(err, 1) {
		if ok {
			t.Fatalf("message %d reported acknowledged after %v", i, err)
		}
	}
	if got := kafkax.Acked(nil, 3); !got[0] || !got[1] || !got[2] {
		t.Fatalf("Acked(nil) = %v", got)
	}
}

func TestDeadLetterRoundTrip(t *testing.T) {
	d := kafkax.DeadLetter{Source: kafkax.SourceWriter, Reason: "underflow", Key: "1-x", Payload: "{}"}
	m := d.Message()
	got, err := kafkax.ParseDeadLetter(m.Value)
	if err != nil || got.Reason != d.Reason || got.Payload != d.Payload || got.AtMs == 0 {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if len(m.Headers) != 1 || string(m.Headers[0].Value) != "underflow" || string(m.Key) != "1-x" {
		t.Fatalf("message: %+v", m)
	}
}

// A call's messages leave at once, one produce request per partition they fall in, and are
// not split: the default batch timeout flushes a partition's batch only once the call has
// appended all its messages for it (kafka-go holds the partition's lock while it appends).
// With kafka-go's own default (1 s) a 3-message call would wait a second for more; with a
// timer that could fire between appends it would make more requests than partitions.
func TestSendFlushesEachCallAtOnce(t *testing.T) {
	const partitions = 4
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, event.Topic))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var produces atomic.Int64
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		produces.Add(1)
		return nil, nil, false
	})
	p, err := kafkax.NewProducer(producerConf(t, c.ListenAddrs(), event.Topic))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	msg := func(i int) kafkax.Message {
		return kafkax.Message{Key: []byte(fmt.Sprintf("1-order%d", i)), Value: []byte("v")}
	}
	if err := p.Send(context.Background(), msg(0)); err != nil { // dials and reads metadata
		t.Fatal(err)
	}
	for round := 0; round < 20; round++ {
		var msgs []kafkax.Message
		for i := 0; i < 200; i++ {
			msgs = append(msgs, msg(round*1000+i))
		}
		before := produces.Load()
		if err := p.Send(context.Background(), msgs...); err != nil {
			t.Fatal(err)
		}
		if n := produces.Load() - before; n > partitions {
			t.Fatalf("round %d: %d messages over %d partitions took %d produce requests", round, len(msgs), partitions, n)
		}
	}
}
