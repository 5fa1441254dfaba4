package edge

import (
	"context"
	"time"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/internal/stock"
)

// sweepEvery is how often expired entries are forgotten.
const sweepEvery = time.Minute

// Subscribe drops marks on the stock-back messages of channel, and windows on the edits' ones
// (all of both at each (re)subscription), until ctx ends, returning once subscribed, ctx ends
// or wait is closed.
func Subscribe(
	ctx context.Context,
	cli red.UniversalClient,
	channel string,
	m *Marks,
	wait <-chan struct{},
) (done <-chan struct{}) {
	ps := cli.Subscribe(ctx, channel)
	ch := ps.ChannelWithSubscriptions()
	first := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		defer ps.Close()
		sweep := time.NewTicker(sweepEvery)
		defer sweep.Stop()
		confirmed := false
		for {
			select {
			case <-ctx.Done():
				if !confirmed {
					close(first)
				}
				return
			case <-sweep.C:
				m.Sweep()
			case msg, ok := <-ch:
				if !ok {
					if !confirmed {
						close(first)
					}
					return
				}
				switch v := msg.(type) {
				case *red.Subscription:
					if v.Kind == "subscribe" {
						m.Reset()
						if !confirmed {
							confirmed = true
							close(first)
						}
					}
				case *red.Message:
					aid, edited, err := stock.ParseMessage(v.Payload)
					switch {
					case err != nil:
						logx.Errorf("edge: bad stock-back message %q on %s", v.Payload, channel)
					case edited:
						m.Edited(aid)
					default:
						m.StockBack(aid)
					}
				}
			}
		}
	}()
	select {
	case <-first:
	case <-ctx.Done():
	case <-wait:
		logx.Errorf("edge: not subscribed to %s yet; serving (sold-out marks are bounded by their TTL)", channel)
	}
	return stopped
}
