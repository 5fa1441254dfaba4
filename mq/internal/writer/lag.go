package writer

import (
	"context"
	"sync"
	"time"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/internal/kafkax"
)

// LagWatch reads the writer group's lag from Kafka every interval (the topic's end
// offsets minus the group's committed ones) and exports it as
// seckill_writer_consumer_lag_messages. Start blocks until Stop (a service.Service).
type LagWatch struct {
	progress *kafkax.Progress
	interval time.Duration

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// NewLagWatch watches the group and topic of progress.
func NewLagWatch(progress *kafkax.Progress, interval time.Duration) *LagWatch {
	ctx, cancel := context.WithCancel(context.Background())
	return &LagWatch{progress: progress, interval: interval,
		ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// Lag is the number of events on the topic the group has not committed.
func (l *LagWatch) Lag(ctx context.Context) (int64, error) {
	ends, err := l.progress.Ends(ctx)
	if err != nil {
		return 0, err
	}
	parts := make([]int, 0, len(ends))
	for p := range ends {
		parts = append(parts, p)
	}
	committed, err := l.progress.Committed(ctx, parts)
	if err != nil {
		return 0, err
	}
	var lag int64
	for p, end := range ends {
		lag += max(end-max(committed[p], 0), 0)
	}
	return lag, nil
}

// Start exports the lag every interval until Stop.
func (l *LagWatch) Start() {
	defer close(l.done)
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(l.ctx, max(l.interval, 5*time.Second))
		lag, err := l.Lag(ctx)
		cancel()
		switch {
		case err == nil:
			metricLag.Set(float64(lag))
		case l.ctx.Err() == nil:
			logx.Errorf("writer: consumer lag: %v", err)
		}
		select {
		case <-l.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Stop stops the watch and waits for it.
func (l *LagWatch) Stop() {
	l.once.Do(l.cancel)
	<-l.done
}
