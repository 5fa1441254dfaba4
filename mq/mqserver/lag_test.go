package mqserver

import (
	"context"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/mq/internal/writer"
)

// TestConsumerLag: the lag the mq service exports is what is on the topic minus what its
// group committed: all of it before the writer runs, none once it has applied everything.
func TestConsumerLag(t *testing.T) {
	brokers := testenv.Kafka(t, 4)
	db := testenv.MySQL(t)
	seed(t, db, 1000)
	publish(t, brokers, 50) // 100 events
	c := testConfig(t, brokers, db.DSN)
	watch := writer.NewLagWatch(kafkax.NewProgress(brokers, c.Consumer.Topic, c.Consumer.Group), time.Second)
	lag := func() int64 {
		t.Helper()
		n, err := watch.Lag(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := lag(); got != 100 {
		t.Fatalf("lag before the writer ran: %d, want 100", got)
	}
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	start(t, s)
	waitFor(t, "the lag to drain", 30*time.Second, func() bool { return lag() == 0 })
	if got := countOrders(t, db, "paid"); got != 50 {
		t.Fatalf("%d orders paid with lag 0, want 50", got)
	}
}
