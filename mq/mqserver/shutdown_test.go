package mqserver

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/devkit/testenv"
)

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStopMidStreamLogsNoErrors: stopping the service while events are flowing logs no
// error: no kq "EOF" per reader, no "commit failed ... closed pipe", no "consume: ...
// writer stopped" per unfinished event. (The unfinished events are not committed and come
// again after a restart; TestConsumerKilledBeforeOffsetCommitAppliesNothingTwice.)
func TestStopMidStreamLogsNoErrors(t *testing.T) {
	brokers := testenv.Kafka(t, 4)
	db := testenv.MySQL(t)
	seed(t, db, 100000)
	publish(t, brokers, 5000)
	c := testConfig(t, brokers, db.DSN)
	c.Writer.MaxBatch = 8 // slow enough that the stop lands mid-stream
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	prev := logx.Reset()
	logx.SetWriter(logx.NewWriter(&logs))
	t.Cleanup(func() {
		if prev != nil {
			logx.SetWriter(prev)
		}
	})
	stop := start(t, s)
	waitFor(t, "the first events applied", 30*time.Second, func() bool { return s.Svc.Writer.Stats.Applied.Load() > 200 })
	stop()
	if n := s.Svc.Writer.Stats.Applied.Load(); n >= 10000 {
		t.Fatalf("all %d events were applied before the stop: not a stop mid-stream", n)
	}
	time.Sleep(300 * time.Millisecond) // anything logged late by kq's goroutines
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, `"error"`) || strings.Contains(line, "[ERROR]") || strings.Contains(line, "EOF") ||
			strings.Contains(line, "closed pipe") || strings.Contains(line, "writer stopped") {
			t.Errorf("stop logged: %s", line)
		}
	}
}
