package kafkax_test

import (
	"context"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
)

func TestProgressFollowsTheGroup(t *testing.T) {
	ctx := context.Background()
	brokers := testenv.Kafka(t, 3)
	c := producerConf(t, brokers, event.Topic)
	c.BatchTimeout = time.Millisecond
	p, err := kafkax.NewProducer(c)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var msgs []kafkax.Message
	for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
		msgs = append(msgs, kafkax.Message{Key: []byte(k), Value: []byte("v")})
	}
	if err := p.Send(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	group := testenv.RandomName("g-")
	prog := kafkax.NewProgress(brokers, event.Topic, group)
	ends, err := prog.Ends(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, e := range ends {
		total += e
	}
	if len(ends) != 3 || total != 6 {
		t.Fatalf("ends %v, want 3 partitions holding 6 messages", ends)
	}
	if ok, err := prog.Reached(ctx, ends); err != nil || ok {
		t.Fatalf("a group that read nothing reached the end: %v %v", ok, err)
	}

	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: event.Topic, GroupID: group,
		StartOffset: kafka.FirstOffset, MaxWait: 50 * time.Millisecond})
	defer r.Close()
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for i := 0; i < 6; i++ {
		m, err := r.FetchMessage(rctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.CommitMessages(rctx, m); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			if ok, _ := prog.Reached(ctx, ends); ok {
				t.Fatal("reached after half the messages")
			}
		}
	}
	if ok, err := prog.Reached(ctx, ends); err != nil || !ok {
		t.Fatalf("after consuming everything: %v %v", ok, err)
	}
}
