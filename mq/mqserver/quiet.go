package mqserver

import (
	"context"
	"errors"
	"strings"

	"github.com/segmentio/kafka-go"
	"github.com/zeromicro/go-zero/core/logc"
	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/mq/internal/writer"
)

// go-queue v1.2.2 logs, at error level, what is the normal course of a stop: "EOF" once
// per reader when its consumer is closed (kq/queue.go Start), and, with CommitInOrder,
// "commit failed, error: io: read/write on closed pipe" for every message handled after
// the close (those offsets must not be committed: the events come again after a restart).
// Its default error handler logs "consume: <event>, error: writer stopped" for each event
// the stopped writer did not finish. None of it is an error. The pipeline logs only severe
// lines while it stops (mqserver.go), and its error handler leaves out ErrStopped.

// logLevel is logx's level for a LogConf level name.
func logLevel(name string) uint32 {
	switch name {
	case "debug":
		return logx.DebugLevel
	case "error":
		return logx.ErrorLevel
	case "severe":
		return logx.SevereLevel
	default:
		return logx.InfoLevel
	}
}

// consumeError is kq's error handler without the stop: an event the writer did not finish
// because it is stopping is not an error (it is not committed and comes again).
func consumeError(ctx context.Context, msg kafka.Message, err error) {
	if errors.Is(err, writer.ErrStopped) {
		return
	}
	logc.Errorf(ctx, "consume: %s, error: %v", strings.TrimSpace(string(msg.Value)), err)
}
