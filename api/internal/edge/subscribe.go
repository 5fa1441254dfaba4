package edge

import (
	"context"
	"crypto/tls"
	"strconv"
	"strings"
	"time"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/redis"
)

// sweepEvery is how often expired entries are forgotten.
const sweepEvery = time.Minute

// NewClient is a go-redis client for the subscription (go-zero's Redis has no
// SUBSCRIBE): a node, or a Redis Cluster (comma-separated Host), with c's user, password
// and TLS (the server's certificate checked against the system's roots).
func NewClient(c redis.RedisConf) red.UniversalClient {
	var tc *tls.Config
	if c.Tls {
		tc = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if c.Type == redis.ClusterType {
		return red.NewClusterClient(&red.ClusterOptions{Addrs: strings.Split(c.Host, ","), Username: c.User,
			Password: c.Pass, DisableIdentity: c.DisableIdentity, TLSConfig: tc})
	}
	return red.NewClient(&red.Options{Addr: c.Host, Username: c.User, Password: c.Pass,
		DisableIdentity: c.DisableIdentity, TLSConfig: tc})
}

// Subscribe drops marks on the stock-back messages of channel (all of them at each
// (re)subscription) until ctx ends, returning once subscribed, ctx ends or wait is closed.
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
					aid, err := strconv.ParseInt(v.Payload, 10, 64)
					if err != nil {
						logx.Errorf("edge: bad stock-back message %q on %s", v.Payload, channel)
						continue
					}
					m.StockBack(aid)
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
